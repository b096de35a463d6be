/**
 * The catalog photo (/catalog) and try-on (/try-on) screens in headless Chromium against the
 * e2e stage's shared local stack (test/helpers/e2e-stack.ts: `npm start`, the real
 * models), signed in through the API's email flow with the session the page keeps: a catalog photo
 * from two reordered shots and a seed is made byte for byte again by "Same again"; a try-on whose
 * person photo cuts off the knees shows its warnings in words under the visible experimental
 * notice, and one of a photo without a person says so in words; both screens fit 390 px. And /device shows a client name written as markup as text.
 * Every page runs under its served CSP with no violation.
 *
 * SCREENSHOTS_DIR=docs/web writes the screenshots the docs show (see docs/web.md).
 */
import { createHash } from 'node:crypto'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import sharp from 'sharp'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { TRYON_WARNINGS } from '../../src/contract/tryon'
import { downloadedBytes, launchChromium } from '../../test/helpers/browser'
import { e2eStack } from '../../test/helpers/e2e-stack'
import { signInByEmail } from '../../test/helpers/local-stack'
import { WARNING_SENTENCES } from '../src/try-on-warnings'

const fixture = (path: string) => fileURLToPath(new URL(`../../${path}`, import.meta.url))
const SHOTS = process.env.SCREENSHOTS_DIR
const PHONE = { width: 390, height: 844 }

let browser: Browser
let baseUrl: string
/** The page's session (web/src/session.ts), as its sign-in form would have saved it. */
let session: string
/** Two small shots of one product (front, then back), so the catalog generator's runs stay short. */
let front: Buffer
let back: Buffer
const cspViolations: string[] = []
/** Uncaught errors and console errors of the pages, per test: a screen that throws is broken. */
const pageErrors: string[] = []

interface Verified {
  accessToken: string
  refreshToken: string
  expiresIn: number
  user: { id: string; email: string }
  workspace: { id: string; name: string }
}

beforeAll(async () => {
  if (SHOTS) mkdirSync(SHOTS, { recursive: true })
  baseUrl = e2eStack().baseUrl
  const [launched, verified] = await Promise.all([
    launchChromium(),
    signInByEmail(baseUrl, `screens-${Date.now()}@example.com`) as Promise<unknown> as Promise<Verified>,
  ])
  browser = launched
  session = JSON.stringify({ ...verified, expiresAt: Date.now() + verified.expiresIn * 1000 })
  const coffee = sharp(fixture('inference-server/test/fixtures/coffee.png')).resize(192)
  ;[front, back] = await Promise.all([coffee.clone().png().toBuffer(), coffee.clone().flop().png().toBuffer()])
})

afterAll(async () => {
  await browser?.close()
})

afterEach(() => {
  // A CSP the page breaks would leave a button dead in production only: every test checks it.
  expect(cspViolations.splice(0)).toEqual([])
  expect(pageErrors.splice(0)).toEqual([])
})

/** A signed-in page: the session is in sessionStorage before the page's script runs. */
async function newPage(viewport = { width: 1280, height: 900 }): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport, acceptDownloads: true })
  await context.addInitScript(`sessionStorage.setItem('cutout.session', ${JSON.stringify(session)})
    document.addEventListener('securitypolicyviolation', (e) =>
      console.error('CSP violation: ' + e.violatedDirective + ' blocked ' + e.blockedURI))`)
  context.on('console', (message) => {
    if (/Content Security Policy|CSP violation/.test(message.text())) cspViolations.push(message.text())
  })
  const page = await context.newPage()
  page.on('pageerror', (err) => void pageErrors.push(err.message))
  return { context, page }
}

async function shot(page: Page, name: string, fullPage = true): Promise<void> {
  if (SHOTS) await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage })
}

/** Drops `files` on `selector` as a person dragging them from their desktop would. */
async function dropFiles(page: Page, selector: string, files: { name: string; bytes: Buffer; type: string }[]) {
  const items = files.map((f) => ({ name: f.name, type: f.type, data: f.bytes.toString('base64') }))
  // Evaluated as a string: this file is compiled for Node, without the DOM's types.
  const transfer = await page.evaluateHandle(`(() => {
    const dt = new DataTransfer()
    for (const f of ${JSON.stringify(items)}) {
      const bytes = Uint8Array.from(atob(f.data), (c) => c.charCodeAt(0))
      dt.items.add(new File([bytes], f.name, { type: f.type }))
    }
    return dt
  })()`)
  await page.dispatchEvent(selector, 'dragover', { dataTransfer: transfer })
  await page.dispatchEvent(selector, 'drop', { dataTransfer: transfer })
}

/** The bytes the download link saves. */
async function downloaded(page: Page, selector: string): Promise<Buffer> {
  const [download] = await Promise.all([page.waitForEvent('download'), page.click(selector)])
  return downloadedBytes(download)
}

const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex')

/** Nothing wider than a 390 px phone: no horizontal scroll. */
async function expectFitsPhone(page: Page): Promise<void> {
  await page.setViewportSize(PHONE)
  expect(await page.evaluate<number>('document.scrollingElement.scrollWidth')).toBeLessThanOrEqual(PHONE.width)
}

describe('/catalog', () => {
  it('two reordered shots and a seed make a photo that "Same again" makes byte for byte again; it fits 390 px', async () => {
    const { context, page } = await newPage()
    await page.goto(new URL('/catalog', baseUrl).href)
    await page.locator('#make').waitFor()
    await page.locator('#recent-list li', { hasText: 'None yet.' }).waitFor()

    // A file that is not an image: the API's problem names the reference, and nothing is made.
    await dropFiles(page, '#catalog-drop', [
      { name: 'notes.txt', bytes: Buffer.from('not a photo'), type: 'text/plain' },
    ])
    await page.click('#catalog-make')
    await expect.poll(() => page.locator('#catalog-error').textContent()).toMatch(/references\.0/)
    await page.getByRole('button', { name: 'Remove notes.txt' }).click()

    // Back first, then front; the buttons put the front first again (and keep the focus on the row's button).
    await dropFiles(page, '#catalog-drop', [
      { name: 'back.png', bytes: back, type: 'image/png' },
      { name: 'front.png', bytes: front, type: 'image/png' },
    ])
    const rows = page.locator('#references li')
    await expect(rows.allTextContents()).resolves.toEqual([
      expect.stringMatching(/^Front.*back\.png/),
      expect.stringMatching(/^Back.*front\.png/),
    ])
    await page.getByRole('button', { name: 'Move front.png up' }).click()
    await expect(rows.allTextContents()).resolves.toEqual([
      expect.stringMatching(/^Front.*front\.png/),
      expect.stringMatching(/^Back.*back\.png/),
    ])
    expect(await page.evaluate('document.activeElement.getAttribute("aria-label")')).toBe('Move front.png down')

    // Four at most: of three more shots, two fit and the third is left out, saying so.
    await dropFiles(
      page,
      '#catalog-drop',
      ['side.png', 'detail.png', 'extra.png'].map((name) => ({ name, bytes: front, type: 'image/png' })),
    )
    await expect(rows.evaluateAll((items) => items.map((li) => li.getAttribute('data-role')))).resolves.toEqual([
      'front',
      'back',
      'side',
      'detail',
    ])
    expect(await page.locator('#catalog-error').textContent()).toMatch(/at most 4 shots.*1 left out/)
    await page.getByRole('button', { name: 'Remove detail.png' }).click()
    await page.getByRole('button', { name: 'Remove side.png' }).click()
    await expect(rows.count()).resolves.toBe(2)

    await page.selectOption('#catalog-size', '256x256')
    await page.selectOption('#catalog-layout', 'views')
    await page.fill('#catalog-prompt', 'Ceramic mug, studio light')
    await page.fill('#catalog-seed', '4242')
    let sent = 0
    page.on('request', (r) => {
      if (r.method() === 'POST' && r.url().endsWith('/v1/catalog-images')) sent++
    })
    await page.click('#catalog-make')
    await page.locator('#catalog-result').waitFor({ timeout: 120_000 })
    expect(await page.locator('#catalog-result-seed').textContent()).toBe('4242')
    const first = await downloaded(page, '#catalog-download')
    expect(await sharp(first).metadata()).toMatchObject({ format: 'png', width: 256, height: 256 })
    await shot(page, 'catalog')

    // The form changes after the photo: "Same again" still sends the photo's own inputs.
    await page.fill('#catalog-seed', '7')
    await page.selectOption('#catalog-layout', 'hero')
    await page.click('#catalog-again')
    await page.locator('#recent-list li[data-id]').nth(1).waitFor({ timeout: 120_000 })
    expect(await page.locator('#catalog-result-seed').textContent()).toBe('4242')
    const again = await downloaded(page, '#catalog-download')
    expect(sha(again)).toBe(sha(first))
    expect(sent).toBe(2)

    await expectFitsPhone(page)
    await shot(page, 'catalog-phone')

    // The recent photos: both, still there after a reload (read back from the API).
    await page.reload()
    const recent = page.locator('#recent-list li[data-id] img')
    await expect.poll(() => recent.count()).toBe(2)
    expect(await page.evaluate<number>('document.scrollingElement.scrollWidth')).toBeLessThanOrEqual(PHONE.width)
    await context.close()
  })
})

describe('/try-on', () => {
  it('shows the experimental notice, then a result with its warnings in words; it fits 390 px', async () => {
    const { context, page } = await newPage()
    await page.goto(new URL('/try-on', baseUrl).href)
    await page.locator('#try-on').waitFor()
    expect(await page.locator('#tryon-notice').textContent()).toMatch(/Experimental, non-commercial/)

    // The knees are out of this photo's frame: a dress (shoulders to knees) is partly placed by estimate.
    await page.setInputFiles('#tryon-person', fixture('inference-server/test/fixtures/people/standing-field.jpg'))
    await page.setInputFiles('#tryon-garment', fixture('docs/try-on/garment-dress.jpg'))
    await page.selectOption('#tryon-category', 'dress')
    await page.fill('#tryon-seed', '7')
    await page.click('#tryon-make')
    await page.locator('#tryon-result').waitFor({ timeout: 150_000 })
    expect(await page.locator('#tryon-error').isHidden()).toBe(true)

    const warnings = page.locator('#tryon-warnings li')
    await expect(warnings.evaluateAll((items) => items.map((li) => li.getAttribute('data-code')))).resolves.toEqual([
      TRYON_WARNINGS.experimental,
      TRYON_WARNINGS.partialBody,
    ])
    for (const code of [TRYON_WARNINGS.experimental, TRYON_WARNINGS.partialBody]) {
      const text = await page.locator(`#tryon-warnings li[data-code="${code}"]`).textContent()
      expect(text).toContain(WARNING_SENTENCES[code])
    }
    const result = await downloaded(page, '#tryon-download')
    expect(await sharp(result).metadata()).toMatchObject({ format: 'png', width: 427, height: 640 })
    expect(await page.locator('#tryon-notice').isVisible()).toBe(true)
    await shot(page, 'try-on')
    await expectFitsPhone(page)
    await shot(page, 'try-on-phone')

    // A photo with no person in it: the failed job's error is said in words, not as a code.
    await page.setInputFiles('#tryon-person', fixture('inference-server/test/fixtures/coffee.png'))
    await page.click('#tryon-make')
    const error = page.locator('#tryon-error')
    await error.waitFor({ timeout: 150_000 })
    expect(await error.textContent()).toBe(WARNING_SENTENCES[TRYON_WARNINGS.noPose])
    expect(await page.locator('#tryon-result').isHidden()).toBe(true)
    await context.close()
  })
})

describe('/device', () => {
  it('shows a client name written as markup as text: no element is made from it', async () => {
    const client = '<img src=x onerror=window.pwned=1><b>cli</b>'
    const started = await fetch(new URL('/v1/device-authorizations', baseUrl), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client }),
    })
    expect(started.status).toBe(201)
    const { userCode } = (await started.json()) as { userCode: string }

    const { context, page } = await newPage(PHONE)
    await page.goto(new URL(`/device?user_code=${userCode}`, baseUrl).href)
    const named = page.locator('#device-client', { hasText: 'asks to sign in as you' })
    await named.waitFor()
    expect(await named.textContent()).toContain(`“${client}”`)
    await expect(named.locator('img, b').count()).resolves.toBe(0)
    expect(await page.evaluate('window.pwned')).toBeUndefined()
    await context.close()
  })
})
