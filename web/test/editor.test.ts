/**
 * The editor (web/editor.html, web/src/editor/) in headless Chromium against the e2e stage's
 * shared local stack (the real model): opened from History, a brush stroke changes the exported
 * PNG only where it was drawn, Undo shows (and exports) the previous revision again, a box is
 * one refinement sent on release, each export format downloads and opens, a revision made
 * through the API behind the editor's back turns its next stroke into a 409 that reloads it, and
 * a stroke drawn after Undo starts from the revision on show and drops the undone ones.
 *
 * SCREENSHOTS_DIR=docs/web writes the screenshots docs/web.md shows.
 */
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { unzipSync } from 'fflate'
import type { Browser, Page } from 'playwright-core'
import sharp from 'sharp'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { downloadedBytes, launchChromium } from '../../test/helpers/browser'
import { e2eStack } from '../../test/helpers/e2e-stack'
import { signInByEmail } from '../../test/helpers/local-stack'
import {
  type Api,
  apiAs,
  drag,
  removal,
  revisionShown,
  shownAt,
  signedInPage,
  tool,
  type Verified,
} from './editor-page'

const SIZE = 512
const SHOTS = process.env.SCREENSHOTS_DIR
const PHONE = { width: 390, height: 844 }

let browser: Browser
let baseUrl: string
let session: Verified
let api: Api
let jobId: string
const cspViolations: string[] = []

beforeAll(async () => {
  baseUrl = e2eStack().baseUrl
  if (SHOTS) mkdirSync(SHOTS, { recursive: true })
  api = apiAs(baseUrl, () => session)
  ;[browser, session] = await Promise.all([
    launchChromium(),
    signInByEmail(baseUrl, `editor-${Date.now()}@example.com`) as Promise<Verified>,
  ])
  jobId = await removal(api)
})

afterAll(async () => {
  await browser?.close()
})

afterEach(() => {
  expect(cspViolations.splice(0)).toEqual([])
})

const newPage = () => signedInPage(browser, session, (text) => cspViolations.push(text))

async function shot(page: Page, name: string): Promise<void> {
  if (SHOTS) await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true })
}

/** Exports the revision on show in `format` through the form; the downloaded file's name and bytes. */
async function exportAs(page: Page, format: string): Promise<{ name: string; bytes: Buffer }> {
  await page.selectOption('#export-format', format)
  const [download] = await Promise.all([
    page.waitForEvent('download', { timeout: 60_000 }),
    page.click('#export-form button[type="submit"]'),
  ])
  return { name: download.suggestedFilename(), bytes: await downloadedBytes(download) }
}

const rgba = (bytes: Buffer) => sharp(bytes).ensureAlpha().raw().toBuffer({ resolveWithObject: true })

/** The bounding box of the pixels whose RGBA differ between two same-sized images, and their count. */
function changed(a: Buffer, b: Buffer, width: number) {
  let count = 0
  const box = { x0: Number.POSITIVE_INFINITY, y0: Number.POSITIVE_INFINITY, x1: -1, y1: -1 }
  for (let p = 0; p < a.length / 4; p++) {
    if (a.readUInt32BE(p * 4) === b.readUInt32BE(p * 4)) continue
    count++
    const x = p % width
    const y = Math.floor(p / width)
    box.x0 = Math.min(box.x0, x)
    box.y0 = Math.min(box.y0, y)
    box.x1 = Math.max(box.x1, x)
    box.y1 = Math.max(box.y1, y)
  }
  return { count, box }
}

describe('the editor', () => {
  it('is served with the page security headers and no inline script', async () => {
    const res = await fetch(new URL('/editor', baseUrl))
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toContain('text/html')
    expect(res.headers.get('x-content-type-options')).toBe('nosniff')
    expect(res.headers.get('referrer-policy')).toBeTruthy()
    const csp = res.headers.get('content-security-policy') ?? ''
    expect(csp).toContain("script-src 'self'")
    expect(csp).toContain("frame-ancestors 'none'")
    expect(csp).not.toMatch(/unsafe-(inline|eval|hashes)/)
    const html = await res.text()
    expect(
      [...html.matchAll(/<script\b[^>]*>([\s\S]*?)<\/script>/gi)].map(([tag, body]) => [
        tag.match(/src="([^"]+)"/)?.[1],
        body.trim(),
      ]),
    ).toEqual([['/editor.js', '']])
    expect(html).not.toMatch(/<style\b|\sstyle=|\son[a-z]+=|javascript:/i)
  })

  it('without a session asks to sign in and calls nothing', async () => {
    const context = await browser.newContext()
    const page = await context.newPage()
    const asked: string[] = []
    page.on('request', (r) => {
      if (new URL(r.url()).pathname.startsWith('/v1/')) asked.push(r.url())
    })
    await page.goto(`${baseUrl}/editor?job=${jobId}`)
    await page.locator('#editor-signed-out a[href="/#sign-in"]').waitFor()
    expect(await page.locator('#editor').isHidden()).toBe(true)
    expect(asked).toEqual([])
    await context.close()
  })

  it('opens from History; a stroke changes the export only where drawn; undo restores the previous mask; a box refinement makes a revision; every format downloads; a 409 reloads; undo, then draw starts from the revision on show', async () => {
    const { context, page } = await newPage()
    await page.goto(baseUrl)
    const edit = page.locator('#history-rows a', { hasText: 'Edit' }).first()
    await edit.waitFor()
    expect(await edit.getAttribute('href')).toBe(`/editor?job=${jobId}`)
    await edit.click()
    await page.locator('#editor[data-ready]').waitFor({ timeout: 120_000 })
    const projectId = new URL(page.url()).searchParams.get('project')
    expect(projectId).toMatch(/^[0-9a-f-]{36}$/)
    await revisionShown(page, 'Step 1 of 1')

    // Revision 1 as a PNG: the baseline, and where the subject is opaque.
    const before = await exportAs(page, 'png')
    expect(before.name).toMatch(/-r1\.png$/)
    const base = await rgba(before.bytes)
    expect(base.info).toMatchObject({ width: SIZE, height: SIZE })
    let opaque = { x0: SIZE, y0: SIZE, x1: 0, y1: 0 }
    for (let p = 0; p < SIZE * SIZE; p++) {
      if (base.data[p * 4 + 3] < 250) continue
      const [x, y] = [p % SIZE, Math.floor(p / SIZE)]
      opaque = {
        x0: Math.min(opaque.x0, x),
        y0: Math.min(opaque.y0, y),
        x1: Math.max(opaque.x1, x),
        y1: Math.max(opaque.y1, y),
      }
    }
    const cy = Math.round((opaque.y0 + opaque.y1) / 2)
    const [sx0, sx1] = [opaque.x0 + (opaque.x1 - opaque.x0) / 3, opaque.x0 + (2 * (opaque.x1 - opaque.x0)) / 3]

    // An erase stroke across the subject's middle, 40 px wide, hard and full.
    const mx = Math.round((sx0 + sx1) / 2)
    const unedited = await shownAt(page, mx, cy)
    expect(unedited[3]).toBe(255)
    await tool(page, 'erase')
    await page.fill('#brush-size', '40')
    await page.fill('#brush-hardness', '100')
    await page.fill('#brush-opacity', '100')
    await drag(page, [
      [sx0, cy],
      [sx1, cy],
    ])
    await revisionShown(page, 'Step 2 of 2')
    const erased = await shownAt(page, mx, cy)
    expect(erased).not.toEqual(unedited) // the backdrop shows through
    await shot(page, 'editor')
    const after = await rgba((await exportAs(page, 'png')).bytes)
    const diff = changed(base.data, after.data, SIZE)
    expect(diff.count).toBeGreaterThan(500)
    // Only within the brush's reach of the stroke (radius 20, plus a pixel of pointer rounding).
    expect(diff.box.x0).toBeGreaterThanOrEqual(Math.floor(sx0 - 22))
    expect(diff.box.x1).toBeLessThanOrEqual(Math.ceil(sx1 + 22))
    expect(diff.box.y0).toBeGreaterThanOrEqual(cy - 22)
    expect(diff.box.y1).toBeLessThanOrEqual(cy + 22)
    // Erased: the stroke's middle is transparent now.
    expect(after.data[(cy * SIZE + mx) * 4 + 3]).toBe(0)

    // Undo shows revision 1's mask again and exports exactly its pixels; Redo returns to 2.
    await page.click('#undo')
    await revisionShown(page, 'Step 1 of 2')
    expect(await shownAt(page, mx, cy)).toEqual(unedited)
    const undone = await rgba((await exportAs(page, 'png')).bytes)
    expect(undone.data.equals(base.data)).toBe(true)
    await page.click('#redo')
    await revisionShown(page, 'Step 2 of 2')
    expect(await shownAt(page, mx, cy)).toEqual(erased)

    // A chosen colour behind the cutout shows where the stroke erased; then the checkerboard again.
    await page.selectOption('#backdrop', 'color')
    await page.fill('#backdrop-color', '#00ff00')
    await expect.poll(() => shownAt(page, mx, cy)).toEqual([0, 255, 0, 255])
    await page.selectOption('#backdrop', 'checkerboard')
    await expect.poll(() => shownAt(page, mx, cy)).toEqual(erased)

    // Zoom and pan change the view, never the canvas: it stays the size of its box on screen.
    const canvas = page.locator('#editor-canvas')
    const view = async () => ((await canvas.getAttribute('data-view')) ?? '').split(' ').map(Number)
    const canvasSize = () =>
      page.evaluate<
        number[]
      >(`(() => { const c = document.getElementById('editor-canvas'); const b = c.getBoundingClientRect();
        return [c.width, c.height, Math.round(b.width * devicePixelRatio), Math.round(b.height * devicePixelRatio)] })()`)
    const [fitScale] = await view()
    await page.click('#zoom-in')
    await page.click('#zoom-in')
    await expect.poll(async () => (await view())[0]).toBeCloseTo(fitScale * 1.5625, 5)
    await canvas.focus()
    const [, ox] = await view()
    await page.keyboard.press('ArrowRight')
    await expect.poll(async () => (await view())[1]).toBeGreaterThan(ox)
    const [cw, ch, bw, bh] = await canvasSize()
    expect([cw, ch]).toEqual([bw, bh])
    await page.click('#zoom-fit')
    await expect.poll(async () => (await view())[0]).toBe(fitScale)

    // A box is one refinement, sent on release: revision 3 made by the refinement.
    await tool(page, 'box')
    await drag(page, [
      [opaque.x0, opaque.y0],
      [(opaque.x0 + opaque.x1) / 2, (opaque.y0 + opaque.y1) / 2],
    ])
    await revisionShown(page, 'Step 3 of 3', 60_000)
    await page.locator('#refine-status', { hasText: 'revision 3' }).waitFor()
    const { revisions } = await api<{ revisions: { id: string; refinementId: string | null }[] }>(
      `/v1/projects/${projectId}/revisions`,
    )
    expect(revisions).toHaveLength(3)
    expect(revisions[0].refinementId).not.toBeNull()
    expect(await page.getAttribute('#revision', 'data-revision-id')).toBe(revisions[0].id)

    // Every format downloads and opens; JPEG with the recipe: red, cropped, 10 px margin, 200 wide.
    for (const format of ['webp', 'png'] as const) {
      const file = await exportAs(page, format)
      expect(file.name).toMatch(new RegExp(`-r3\\.${format}$`))
      expect(await sharp(file.bytes).metadata()).toMatchObject({ format, width: SIZE, height: SIZE })
    }
    await page.selectOption('#export-background', 'color')
    await page.fill('#export-color', '#ff0000')
    await page.check('#export-crop')
    await page.fill('#export-margin', '10')
    await page.fill('#export-width', '200')
    const jpeg = await exportAs(page, 'jpeg')
    expect(jpeg.name).toMatch(/-r3\.jpg$/)
    const jpegMeta = await sharp(jpeg.bytes).metadata()
    expect(jpegMeta).toMatchObject({ format: 'jpeg', width: 200 })
    const corner = await sharp(jpeg.bytes).extract({ left: 0, top: 0, width: 1, height: 1 }).raw().toBuffer()
    expect(corner[0]).toBeGreaterThan(200) // the margin is the recipe's red
    expect(corner[1]).toBeLessThan(60)
    await page.selectOption('#export-background', 'transparent')
    await page.uncheck('#export-crop')
    await page.fill('#export-margin', '0')
    await page.fill('#export-width', '')
    const zip = unzipSync(new Uint8Array((await exportAs(page, 'zip')).bytes))
    expect(Object.keys(zip).sort()).toEqual(['alpha.png', 'color.jpg'])
    expect(await sharp(zip['color.jpg']).metadata()).toMatchObject({ format: 'jpeg', width: SIZE, height: SIZE })
    expect(await sharp(zip['alpha.png']).metadata()).toMatchObject({ format: 'png', width: SIZE, height: SIZE })
    const psd = (await exportAs(page, 'psd')).bytes
    expect(psd.subarray(0, 4).toString('latin1')).toBe('8BPS')
    expect([psd.readUInt16BE(4), psd.readUInt32BE(14), psd.readUInt32BE(18)]).toEqual([1, SIZE, SIZE])

    // A revision made through the API behind the editor's back: the editor's next stroke is
    // refused with 409, which it says, and it shows that newest revision.
    const project = await api<{ currentRevisionId: string }>(`/v1/projects/${projectId}`)
    const elsewhere = await api<{ id: string; number: number }>(`/v1/projects/${projectId}/revisions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        baseRevisionId: project.currentRevisionId,
        strokes: [{ tool: 'restore', points: [[0.05, 0.05]], size: 0.05, hardness: 1, opacity: 1 }],
      }),
    })
    expect(elsewhere.number).toBe(4)
    await tool(page, 'restore')
    await drag(page, [
      [sx0, cy],
      [sx1, cy],
    ])
    await page.locator('#editor-error', { hasText: 'changed elsewhere' }).waitFor()
    await revisionShown(page, 'Step 4 of 4')
    expect(await page.getAttribute('#revision', 'data-revision-id')).toBe(elsewhere.id)
    const after409 = await api<{ revisions: unknown[] }>(`/v1/projects/${projectId}/revisions`)
    expect(after409.revisions).toHaveLength(4)

    // Undo back to revision 1, then draw: the stroke starts from what is on show, and the undone
    // revisions leave Redo, as in any paint program. An erase across the subject's lower half,
    // clear of the first stroke's reach.
    for (const label of ['Step 3 of 4', 'Step 2 of 4', 'Step 1 of 4']) {
      await page.click('#undo')
      await revisionShown(page, label)
    }
    const ly = Math.round((cy + opaque.y1) / 2)
    expect(ly - cy).toBeGreaterThan(50)
    expect(base.data[(ly * SIZE + mx) * 4 + 3]).toBeGreaterThan(200)
    await tool(page, 'erase')
    await drag(page, [
      [sx0, ly],
      [sx1, ly],
    ])
    await revisionShown(page, 'Step 2 of 2')
    expect(await page.locator('#redo').isDisabled()).toBe(true)
    const redrawn = await exportAs(page, 'png')
    expect(redrawn.name).toMatch(/-r5\.png$/)
    const fromFirst = await rgba(redrawn.bytes)
    // Revision 1 plus the stroke: changed only within its reach, erased in its middle…
    const strokeDiff = changed(base.data, fromFirst.data, SIZE)
    expect(strokeDiff.count).toBeGreaterThan(500)
    expect(strokeDiff.box.x0).toBeGreaterThanOrEqual(Math.floor(sx0 - 22))
    expect(strokeDiff.box.x1).toBeLessThanOrEqual(Math.ceil(sx1 + 22))
    expect(strokeDiff.box.y0).toBeGreaterThanOrEqual(ly - 22)
    expect(strokeDiff.box.y1).toBeLessThanOrEqual(ly + 22)
    expect(fromFirst.data[(ly * SIZE + mx) * 4 + 3]).toBe(0)
    // …and not revision 2's erase (nor the refinement, nor revision 4's dot): as revision 1 where it erased.
    const alphaAt = (data: Buffer, x: number, y: number) => data[(y * SIZE + x) * 4 + 3]
    expect(alphaAt(fromFirst.data, mx, cy)).toBe(alphaAt(base.data, mx, cy))
    expect(alphaAt(fromFirst.data, mx, cy)).toBeGreaterThan(200)
    const afterUndo = await api<{ revisions: { id: string; number: number; restoreRevisionId: string | null }[] }>(
      `/v1/projects/${projectId}/revisions`,
    )
    expect(afterUndo.revisions).toHaveLength(5)
    expect(afterUndo.revisions[0]).toMatchObject({ number: 5, restoreRevisionId: revisions[2].id })
    // One Undo goes back to revision 1, not to the undone ones.
    await page.click('#undo')
    await revisionShown(page, 'Step 1 of 2')
    expect(await page.getAttribute('#revision', 'data-revision-id')).toBe(revisions[2].id)
    await page.click('#redo')
    await revisionShown(page, 'Step 2 of 2')

    // Phone width: the panel goes under the picture and nothing is wider than the screen.
    await page.setViewportSize(PHONE)
    await expect
      .poll(() => page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth'))
      .toBeLessThanOrEqual(0)
    await shot(page, 'editor-phone')
    await context.close()
  })
})
