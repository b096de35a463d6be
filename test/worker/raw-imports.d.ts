// Vite's `?raw` suffix imports a file's text (the webhook test checks the doc quotes its example).
declare module '*?raw' {
  const text: string
  export default text
}
