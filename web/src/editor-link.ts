/** Where the editor (editor.html, web/src/editor/) opens a removal: it makes the project from it. */
export const editorUrl = (jobId: string) => `/editor?job=${encodeURIComponent(jobId)}`
