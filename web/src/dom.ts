/** Small DOM helpers: the page is plain TypeScript, so these stand in for a framework's. */

/** The element with `id`; a missing one is a bug in the HTML, so it throws at start-up. */
export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const el = document.getElementById(id)
  if (!el) throw new Error(`#${id} is missing from the page`)
  return el as T
}

type Child = Node | string | null | undefined | false

/** Builds an element; text goes in as text nodes, so API data can never inject markup. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | boolean | undefined> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag)
  for (const [name, value] of Object.entries(attrs)) {
    if (value === true) el.setAttribute(name, '')
    else if (typeof value === 'string') el.setAttribute(name, value)
  }
  for (const child of children) if (child) el.append(child)
  return el
}

/** Shows `message` in an error region (role="alert" in the HTML, so screen readers announce it). */
export function showError(region: HTMLElement, message: string | null): void {
  region.textContent = message ?? ''
  region.hidden = !message
}

/** Runs `task` with `button` disabled, so a double click cannot send a request twice. */
export async function busy<T>(button: HTMLButtonElement, task: () => Promise<T>): Promise<T> {
  button.disabled = true
  button.setAttribute('aria-busy', 'true')
  try {
    return await task()
  } finally {
    button.disabled = false
    button.removeAttribute('aria-busy')
  }
}

export const formatDate = (iso: string) =>
  new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' })

/** Shows the elements marked data-signed-in or data-signed-out that match the session state. */
export function toggleSignedIn(signedIn: boolean): void {
  for (const el of document.querySelectorAll<HTMLElement>('[data-signed-in]')) el.hidden = !signedIn
  for (const el of document.querySelectorAll<HTMLElement>('[data-signed-out]')) el.hidden = signedIn
}

/** Files picked with `input` or dropped on `zone` go to `take`; the zone is marked while dragged over. */
export function acceptFiles(
  zone: HTMLElement,
  input: HTMLInputElement,
  take: (files: FileList | null | undefined) => void,
) {
  input.addEventListener('change', () => {
    take(input.files)
    input.value = ''
  })
  zone.addEventListener('dragover', (event) => {
    event.preventDefault()
    zone.classList.add('over')
  })
  zone.addEventListener('dragleave', () => zone.classList.remove('over'))
  zone.addEventListener('drop', (event) => {
    event.preventDefault()
    zone.classList.remove('over')
    take(event.dataTransfer?.files)
  })
}
