/**
 * What the editor's tests (editor.test.ts, editor-clicks.test.ts) share: a signed-in account's API
 * calls, a finished removal to open, a signed-in browser tab, and a person's pointer on the canvas
 * in photo pixels (read back from the view the canvas last drew, its `data-view`).
 */
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { expect } from 'vitest'

export const FIXTURE = fileURLToPath(new URL('../../test/fixtures/astronaut.png', import.meta.url))

export interface Verified {
  accessToken: string
  refreshToken: string
  expiresIn: number
  user: { id: string; email: string }
  workspace: { id: string; name: string }
}

export type Api = <T>(path: string, init?: RequestInit) => Promise<T>

/** JSON calls to the API as `session`'s member; a non-2xx throws with its body. */
export function apiAs(baseUrl: string, session: () => Verified): Api {
  return async <T>(path: string, init: RequestInit = {}): Promise<T> => {
    const res = await fetch(new URL(path, baseUrl), {
      ...init,
      headers: { authorization: `Bearer ${session().accessToken}`, ...init.headers },
    })
    if (!res.ok) throw new Error(`${init.method ?? 'GET'} ${path}: ${res.status} ${await res.text()}`)
    return (await res.json()) as T
  }
}

/** A succeeded removal of the 512×512 fixture, made through the API. */
export async function removal(api: Api): Promise<string> {
  const form = new FormData()
  form.append('image', new Blob([readFileSync(FIXTURE)], { type: 'image/png' }), 'astronaut.png')
  form.append('options', JSON.stringify({ quality: 'fast', alpha: { mode: 'raw', feather: 0 }, output: 'cutout' }))
  let job = await api<{ id: string; status: string }>('/v1/removals', {
    method: 'POST',
    body: form,
    headers: { 'idempotency-key': crypto.randomUUID(), prefer: 'wait=8' },
  })
  for (let i = 0; i < 120 && (job.status === 'queued' || job.status === 'processing'); i++) {
    await new Promise((r) => setTimeout(r, 1000))
    job = await api(`/v1/jobs/${job.id}`)
  }
  expect(job.status).toBe('succeeded')
  return job.id
}

/**
 * A signed-in tab: the session the page keeps in sessionStorage, as the sign-in form saves it.
 * Each Content Security Policy violation the page reports goes to `onCsp`.
 */
export async function signedInPage(
  browser: Browser,
  session: Verified,
  onCsp: (text: string) => void,
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true })
  const stored = {
    accessToken: session.accessToken,
    refreshToken: session.refreshToken,
    expiresAt: Date.now() + session.expiresIn * 1000,
    user: session.user,
    workspace: session.workspace,
  }
  await context.addInitScript(`sessionStorage.setItem('cutout.session', ${JSON.stringify(JSON.stringify(stored))});
    document.addEventListener('securitypolicyviolation', (e) =>
      console.error('CSP violation: ' + e.violatedDirective + ' blocked ' + e.blockedURI))`)
  context.on('console', (message) => {
    if (/Content Security Policy|CSP violation/.test(message.text())) onCsp(message.text())
  })
  return { context, page: await context.newPage() }
}

/** Where photo pixel (x, y) is on the screen, from the view the canvas last drew. */
export async function screenPoint(page: Page, x: number, y: number): Promise<{ x: number; y: number }> {
  const canvas = page.locator('#editor-canvas')
  const [scale, ox, oy] = ((await canvas.getAttribute('data-view')) ?? '').split(' ').map(Number)
  const box = (await canvas.boundingBox())!
  const dpr = await page.evaluate<number>('window.devicePixelRatio')
  return { x: box.x + ((x - ox) * scale) / dpr, y: box.y + ((y - oy) * scale) / dpr }
}

/** Drags the mouse over the canvas through photo pixels `points`. */
export async function drag(page: Page, points: [number, number][]): Promise<void> {
  const [first, ...rest] = points
  const start = await screenPoint(page, ...first)
  await page.mouse.move(start.x, start.y)
  await page.mouse.down()
  for (const p of rest) {
    const to = await screenPoint(page, ...p)
    await page.mouse.move(to.x, to.y, { steps: 8 })
  }
  await page.mouse.up()
}

/** Clicks the canvas at photo pixel (x, y). */
export async function clickAt(page: Page, x: number, y: number): Promise<void> {
  const at = await screenPoint(page, x, y)
  await page.mouse.click(at.x, at.y)
}

/** The RGBA the canvas shows at photo pixel (x, y), `dx`, `dy` canvas pixels off it. */
export async function shownAt(page: Page, x: number, y: number, dx = 0, dy = 0): Promise<number[]> {
  await page.evaluate('new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))')
  return page.evaluate(`(() => {
    const c = document.getElementById('editor-canvas')
    const [scale, ox, oy] = c.dataset.view.split(' ').map(Number)
    const at = (v, o) => Math.floor((v - o) * scale)
    return Array.from(c.getContext('2d').getImageData(at(${x}, ox) + ${dx}, at(${y}, oy) + ${dy}, 1, 1).data)
  })()`)
}

export const tool = (page: Page, value: string) => page.check(`input[name="tool"][value="${value}"]`)
export const revisionShown = (page: Page, text: string, timeout = 30_000) =>
  page.locator('#revision', { hasText: text }).waitFor({ timeout })
