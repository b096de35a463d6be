/**
 * The web page in headless Chromium against the real local stack (`npm start`: the Worker serving
 * web/dist as static assets, the inference server with the real model): an anonymous preview
 * dropped onto the page and downloaded; email sign-in through the dev outbox, then a signed-in
 * removal through an upload, history, an API key (shown once, revoked) and a webhook endpoint
 * that receives the job's event; and /device approving the CLI's `login`. Every page the tests
 * open runs under the served Content-Security-Policy with no violation, and /device refuses to be
 * framed by another origin (clickjacking of Approve).
 *
 * SCREENSHOTS_DIR=docs/web writes the screenshots the docs show (see web/README.md).
 */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import sharp from 'sharp'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { launchChromium } from '../../test/helpers/browser'
import { E2E_STACK_ENV, type E2eStack, e2eStack } from '../../test/helpers/e2e-stack'
import { madeSubject } from '../../inference-server/test/made-subjects'
import { signInOnPage as signIn } from './sign-in'

/** The stack's anonymous removals per day (production's is 7; test/helpers/e2e-stack.ts). */
const DAILY = Number(E2E_STACK_ENV.ANONYMOUS_DAILY_REMOVALS)
const COFFEE = fileURLToPath(new URL('../../inference-server/test/fixtures/coffee.png', import.meta.url))
const CHELSEA = fileURLToPath(new URL('../../inference-server/test/fixtures/chelsea.png', import.meta.url))
const FIXTURE = fileURLToPath(new URL('../../test/fixtures/astronaut.png', import.meta.url))
const CLI = fileURLToPath(new URL('../../cli/dist/main.js', import.meta.url))
const SHOTS = process.env.SCREENSHOTS_DIR
const PHONE = { width: 390, height: 844 }

let stack: E2eStack
let browser: Browser
let work: string
/** What the browser refused under the page's CSP, per test (DESIGN.md §3 "Page security"). */
const cspViolations: string[] = []

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'cutout-page-'))
  if (SHOTS) mkdirSync(SHOTS, { recursive: true })
  stack = e2eStack()
  browser = await launchChromium()
})

afterAll(async () => {
  await browser?.close()
  if (work) rmSync(work, { recursive: true, force: true })
})

afterEach(() => {
  // A CSP the page breaks would leave a button dead in production only: every test checks it.
  expect(cspViolations.splice(0)).toEqual([])
})

/**
 * Chromium reports each refusal to the console ("Refused to … because it violates the following
 * Content Security Policy directive"); the init script also reports each `securitypolicyviolation`
 * event (init scripts run outside the page's CSP).
 */
async function watchCsp(context: BrowserContext): Promise<void> {
  await context.addInitScript(`document.addEventListener('securitypolicyviolation', (e) =>
    console.error('CSP violation: ' + e.violatedDirective + ' blocked ' + e.blockedURI))`)
  context.on('console', (message) => {
    if (/Content Security Policy|CSP violation/.test(message.text())) cspViolations.push(message.text())
  })
}

async function newPage(viewport = { width: 1280, height: 900 }): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport, acceptDownloads: true })
  await watchCsp(context)
  const page = await context.newPage()
  page.on('dialog', (dialog) => void dialog.accept())
  return { context, page }
}

async function shot(page: Page, name: string, fullPage = true): Promise<void> {
  if (SHOTS) await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage })
}

/** One section of the page on its own (history, keys, webhooks), for the docs. */
async function shotOf(page: Page, selector: string, name: string): Promise<void> {
  if (SHOTS) await page.locator(selector).screenshot({ path: join(SHOTS, `${name}.png`) })
}

interface DroppedFile {
  path: string
  type: string
  /** The name the page sees (default: the file's own). */
  name?: string
}

/**
 * Spends 127.0.0.1's anonymous requests in a rate window (30 a window, DESIGN.md §3; the stack's
 * windows last seconds, test/helpers/local-stack.ts), so the page's next anonymous request is
 * refused with a Retry-After. A window spent too near its end is waited out (its Retry-After) and
 * the next one spent, so the page's request lands in the spent window, not the one after.
 */
async function spendAnonymousWindow(baseUrl: string): Promise<void> {
  for (let attempt = 0; attempt < 10; attempt++) {
    let refused: Response | undefined
    for (let sent = 0; sent < 200 && !refused; sent++) {
      const res = await fetch(new URL('/v1/usage', baseUrl))
      if (res.status === 429) refused = res
    }
    if (!refused) throw new Error('the anonymous rate limit never answered 429')
    const retryAfter = Number(refused.headers.get('retry-after'))
    const windowSeconds = Number(/;w=(\d+)/.exec(refused.headers.get('ratelimit-policy') ?? '')?.[1])
    if (retryAfter > windowSeconds / 2) return
    await new Promise((resolve) => setTimeout(resolve, retryAfter * 1000))
  }
  throw new Error('no anonymous rate window could be spent early enough')
}

/** Drops `files` together on the drop zone as a person dragging them from their desktop would. */
async function dropFiles(page: Page, files: DroppedFile[]): Promise<void> {
  const items = files.map((f) => ({
    data: readFileSync(f.path).toString('base64'),
    name: f.name ?? basename(f.path),
    type: f.type,
  }))
  // Evaluated as a string: this file is compiled for Node, without the DOM's types.
  const transfer = await page.evaluateHandle(`(() => {
    const dt = new DataTransfer()
    for (const f of ${JSON.stringify(items)}) {
      const bytes = Uint8Array.from(atob(f.data), (c) => c.charCodeAt(0))
      dt.items.add(new File([bytes], f.name, { type: f.type }))
    }
    return dt
  })()`)
  await page.dispatchEvent('#drop', 'dragover', { dataTransfer: transfer })
  await page.dispatchEvent('#drop', 'drop', { dataTransfer: transfer })
}

const dropFile = (page: Page, path: string, type: string) => dropFiles(page, [{ path, type }])

/** Records every text #status shows, so the test sees the stages the SSE stream moved through. */
async function recordStatus(page: Page): Promise<() => Promise<string[]>> {
  await page.evaluate(`(() => {
    const seen = (window.seen = [])
    const status = document.getElementById('status')
    const observer = new MutationObserver(() => seen.push(status.textContent ?? ''))
    observer.observe(status, { childList: true, characterData: true, subtree: true })
  })()`)
  return () => page.evaluate<string[]>('window.seen')
}

async function downloadPng(page: Page) {
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#download')])
  const path = join(work, download.suggestedFilename())
  await download.saveAs(path)
  return { name: download.suggestedFilename(), meta: await sharp(path).metadata() }
}

const signInOnPage = (page: Page, email: string) => signIn(page, stack.baseUrl, email)

describe('the page, anonymously', () => {
  it('drop → stages → before/after → download of a PNG the size of the photo; the allowance counts down', async () => {
    const { context, page } = await newPage()
    const served = await page.goto(stack.baseUrl)
    // The CSP this test runs under is the one the server sends (checked in full by local-mode.test.ts).
    expect(served?.headers()['content-security-policy']).toContain("script-src 'self'")
    await expect(page.title()).resolves.toMatch(/Cutout/)
    await page.locator('#allowance', { hasText: `${DAILY} of ${DAILY} left today` }).waitFor()
    await shot(page, 'home')

    // A file that is not an image: the API's problem detail is shown, and nothing is spent.
    await dropFile(page, fileURLToPath(new URL('../../README.md', import.meta.url)), 'text/plain')
    const error = page.locator('#remove-error')
    await error.waitFor()
    expect(await error.textContent()).toMatch(/image|supported/i)
    await page.locator('#allowance', { hasText: `${DAILY} of ${DAILY} left today` }).waitFor()

    const statuses = await recordStatus(page)
    await dropFile(page, COFFEE, 'image/png')
    await page.locator('#result').waitFor({ timeout: 120_000 })
    expect(await error.isHidden()).toBe(true)
    const seen = await statuses()
    expect(seen[0]).toBe('Uploading…')
    expect(seen).toContain('Segmenting…')
    expect(seen.at(-1)).toBe('Done')
    await expect(page.locator('#stages li.done').count()).resolves.toBe(6)

    // The slider moves the reveal with the keyboard.
    await page.focus('#slider')
    await page.keyboard.press('Home')
    expect(await page.getAttribute('#compare', 'style')).toContain('--reveal: 0%')
    await page.keyboard.press('End')
    expect(await page.getAttribute('#compare', 'style')).toContain('--reveal: 100%')
    await page.fill('#slider', '55')
    await page.dispatchEvent('#slider', 'input')
    await shot(page, 'preview-result')

    const png = await downloadPng(page)
    expect(png.name).toBe('coffee-cutout.png')
    const source = await sharp(COFFEE).metadata()
    expect(png.meta).toMatchObject({ format: 'png', width: source.width, height: source.height, channels: 4 })
    await page.locator('#allowance', { hasText: `${DAILY - 1} of ${DAILY} left today` }).waitFor()
    // The editor needs an account (projects belong to a workspace): no Edit for a preview.
    expect(await page.locator('#edit').isHidden()).toBe(true)
    // How sure the mask is, beside the result (DESIGN.md §3 Result confidence); the mug is a plain
    // subject, so no warning.
    expect(await page.locator('#result-confidence').innerText()).toMatch(/^Mask confidence \d+ %$/)
    expect(await page.locator('#result-uncertain').isHidden()).toBe(true)

    // Phone width: nothing wider than the screen.
    await page.setViewportSize(PHONE)
    const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth')
    expect(overflow).toBeLessThanOrEqual(0)
    await shot(page, 'phone')
    await context.close()
  })

  it('several images at once run in turn, each with its row and download; when the previews run out the rest wait unstarted', async () => {
    const { context, page } = await newPage()
    await page.goto(stack.baseUrl)
    const allowance = page.locator('#allowance', { hasText: new RegExp(`(\\d+) of ${DAILY} left today`) })
    await allowance.waitFor()
    const left = Number(/(\d+) of /.exec((await allowance.textContent()) ?? '')?.[1])
    expect(left).toBeGreaterThan(0)

    // What the page asks the API for while the images run.
    const asked: string[] = []
    page.on('request', (r) => {
      const url = new URL(r.url())
      if (url.pathname.startsWith('/v1/')) asked.push(`${r.method()} ${url.pathname}`)
    })

    // Every preview left, then one the API refuses (429), then one that is never sent.
    const photos = [COFFEE, CHELSEA]
    const files = Array.from({ length: left + 2 }, (_, i) => ({
      path: photos[i % 2],
      type: 'image/png',
      name: `photo-${i + 1}.png`,
    }))
    await dropFiles(page, files)
    const rows = page.locator('#queue li')
    await expect(rows.count()).resolves.toBe(left + 2)
    await rows
      .nth(left + 1)
      .filter({ hasText: 'Not started' })
      .waitFor({ timeout: 240_000 })

    for (let i = 0; i < left; i++) {
      const source = await sharp(photos[i % 2]).metadata()
      await expect(rows.nth(i).getAttribute('class')).resolves.toBe('done')
      expect(await rows.nth(i).textContent()).toContain(`Done · ${source.width} × ${source.height}`)
      await expect(rows.nth(i).locator('a').getAttribute('download')).resolves.toBe(`photo-${i + 1}-cutout.png`)
    }
    await expect(rows.nth(left).getAttribute('class')).resolves.toBe('failed')
    expect(await rows.nth(left).textContent()).toMatch(/per UTC day/)
    // Three requests an image (the removal, its events, its result): the terminal event says how
    // the job ended, so the job itself is not read, and production's 7 previews fit in a minute's 30
    // requests.
    const perJob = asked.filter((a) => /^GET \/v1\/jobs\/[^/]+$/.test(a))
    expect(perJob, 'jobs read after their event stream ended').toEqual([])
    expect(asked.filter((a) => a.endsWith('/result'))).toHaveLength(left)
    expect(await rows.nth(left + 1).textContent()).toMatch(/Not started: .*per UTC day/)
    expect(await page.locator('#remove-error').textContent()).toMatch(new RegExp(`^photo-${left + 1}\\.png: `))
    await page.locator('#allowance', { hasText: `0 of ${DAILY} left today` }).waitFor()

    // The last finished image is on show; "Show" brings back the first, and its download is its own.
    await expect(rows.nth(left - 1).getAttribute('aria-current')).resolves.toBe('true')
    await rows.nth(0).getByRole('button', { name: 'Show photo-1.png' }).click()
    await expect(rows.nth(0).getAttribute('aria-current')).resolves.toBe('true')
    const firstResult = await rows.nth(0).locator('a').getAttribute('href')
    await expect(page.getAttribute('#after', 'src')).resolves.toBe(firstResult)
    await expect(page.getAttribute('#download', 'download')).resolves.toBe('photo-1-cutout.png')
    await shot(page, 'several-images')

    // "Clear finished" empties the list.
    await page.click('#queue-clear')
    await expect(rows.count()).resolves.toBe(0)
    expect(await page.locator('#queue').isHidden()).toBe(true)
    await context.close()
  })
})

describe('the page, signed in', () => {
  let receiver: Server
  const received: { type: string; data: { jobId: string }; deliveryId: string }[] = []

  beforeAll(async () => {
    receiver = createServer(async (req: IncomingMessage, res) => {
      let body = ''
      for await (const chunk of req) body += chunk
      received.push({ ...JSON.parse(body), deliveryId: String(req.headers['webhook-id']) })
      res.writeHead(200).end()
    })
    receiver.listen(0, '127.0.0.1')
    await once(receiver, 'listening')
  })
  afterAll(() => receiver?.close())

  it('email code → removal through an upload at full size, history, a key shown once and revoked, a webhook that receives the job', async () => {
    const { context, page } = await newPage()
    await page.goto(`${stack.baseUrl}/#sign-in`)
    // The previews above may have spent this address's anonymous requests for the minute, as a
    // person who dropped several images and then signs in would have: the page says it is waiting
    // for the Retry-After, then carries on. Spent on purpose here, so the wait is certain.
    await spendAnonymousWindow(stack.baseUrl)
    const signingIn = signInOnPage(page, `page-${Date.now()}@example.com`)
    await page
      .locator('#rate-wait', { hasText: /^Too many requests from this address; continuing in \d+ s\.$/ })
      .waitFor()
    await shot(page, 'rate-wait', false)
    await signingIn
    expect(await page.locator('#rate-wait').isHidden()).toBe(true)
    await page.locator('#allowance', { hasText: 'credits available' }).waitFor()
    expect(await page.locator('#sign-in').isHidden()).toBe(true)

    // A webhook endpoint: the signing secret once, then the endpoint in the list.
    const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`
    await page.fill('#webhook-url', hookUrl)
    await page.click('#webhook-form button')
    await page.locator('#webhook-created').waitFor()
    expect(await page.locator('#webhook-secret').textContent()).toMatch(/^whsec_/)
    await page.locator('#webhook-list li', { hasText: hookUrl }).waitFor()

    // Signed in, the image goes through POST /v1/uploads and keeps its full size (512×512).
    await page.setInputFiles('#file', FIXTURE)
    await page.locator('#result').waitFor({ timeout: 120_000 })
    const png = await downloadPng(page)
    expect(png.meta).toMatchObject({ width: 512, height: 512, channels: 4 })
    await page.locator('#history-rows tr', { hasText: 'succeeded' }).waitFor()
    const resultHref = (await page.getAttribute('#history-rows a', 'href')) ?? ''
    const jobId = new URL(resultHref, stack.baseUrl).pathname.split('/')[3]
    // Edit opens the editor on this removal (web/test/editor.test.ts drives the editor itself).
    await expect(page.getAttribute('#edit', 'href')).resolves.toBe(`/editor?job=${jobId}`)
    await expect
      .poll(() => received.map((e) => `${e.type} ${e.data.jobId}`), { timeout: 30_000 })
      .toContain(`image.job.completed.v1 ${jobId}`)

    // The endpoint's deliveries: that event delivered with the receiver's 200; Replay sends it
    // again under the same delivery id (SPEC.md: a replay keeps the id for deduplication).
    const endpoint = page.locator('#webhook-list li', { hasText: hookUrl })
    await endpoint.locator('summary', { hasText: 'Deliveries' }).click()
    const delivery = endpoint.locator('tbody tr', { hasText: 'image.job.completed.v1' }).first()
    await delivery.filter({ hasText: 'delivered · HTTP 200' }).waitFor()
    const deliveryId = await delivery.getAttribute('data-delivery')
    const sent = received.find((e) => e.type === 'image.job.completed.v1' && e.data.jobId === jobId)
    expect(sent?.deliveryId).toBe(deliveryId)
    await delivery.getByRole('button', { name: /^Replay / }).click()
    await expect.poll(() => received.filter((e) => e.deliveryId === deliveryId).length, { timeout: 30_000 }).toBe(2)

    // A photo the model cannot be sure of (a disc that fades into the grey): the result says so in
    // words beside it, with the way into the editor; the webhook's completed event carries the same.
    await page.setInputFiles('#file', { name: 'faded.png', mimeType: 'image/png', buffer: await madeSubject('faded') })
    const uncertain = page.locator('#result-uncertain')
    await uncertain.waitFor({ timeout: 120_000 })
    expect(await uncertain.innerText()).toMatch(
      /^The mask is uncertain \(confidence 0\.\d\d\): .+\. Open it in the editor$/,
    )
    const fadedId = new URL((await page.getAttribute('#uncertain-edit', 'href')) ?? '', stack.baseUrl).searchParams.get(
      'job',
    )
    expect(fadedId).not.toBe(jobId)
    expect(await page.getAttribute('#uncertain-edit', 'href')).toBe(`/editor?job=${fadedId}`)
    expect(await page.locator('#result-confidence').innerText()).toMatch(/^Mask confidence \d+ %$/)
    await shotOf(page, '#result', 'uncertain')
    await expect
      .poll(() => received.find((e) => e.type === 'image.job.completed.v1' && e.data.jobId === fadedId)?.data, {
        timeout: 30_000,
      })
      .toMatchObject({ warnings: [{ code: 'low_confidence' }], confidence: expect.any(Number) })

    // An API key: its secret once, a working key, then revoked.
    await page.fill('#key-name', 'page test')
    await page.click('#key-form button')
    await page.locator('#key-created').waitFor()
    const value = (await page.locator('#key-secret').textContent()) ?? ''
    expect(value).toMatch(/^sk_live_/)
    await page.locator('#key-list li', { hasText: 'page test' }).waitFor()
    const usage = () => fetch(new URL('/v1/usage', stack.baseUrl), { headers: { authorization: `Bearer ${value}` } })
    expect((await usage()).status).toBe(200)
    await shot(page, 'signed-in')
    for (const section of ['history', 'keys', 'webhooks']) await shotOf(page, `#${section}`, section)
    await page.click('#key-list li:has-text("page test") button')
    await page.locator('#key-list li', { hasText: 'page test' }).waitFor({ state: 'detached' })
    expect((await usage()).status).toBe(401)

    // A reload keeps the session (sessionStorage); signing out forgets it.
    await page.reload()
    await page.locator('#signed-in-as').waitFor()
    await page.click('#sign-out')
    await page.locator('#signed-out').waitFor()
    expect(await page.locator('#keys').isHidden()).toBe(true)
    await context.close()
  })
})

describe('/device', () => {
  it("approving the CLI's code for a chosen workspace gives `cutout login` its token", async () => {
    const config = join(work, 'config')
    const env: NodeJS.ProcessEnv = { ...process.env, CUTOUT_BASE_URL: stack.baseUrl, XDG_CONFIG_HOME: config }
    delete env.CUTOUT_API_KEY // a developer's own key must not stand in for the device login
    const login = spawn(process.execPath, [CLI, 'login'], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stderr = ''
    login.stderr.on('data', (d) => (stderr += d))
    const exited = once(login, 'close')
    await expect.poll(() => /enter the code ([A-Z]{4}-[A-Z]{4})/.exec(stderr)?.[1], { timeout: 30_000 }).toBeTruthy()
    const [, uri, userCode] = /Open (\S+) and enter the code ([A-Z]{4}-[A-Z]{4})/.exec(stderr)!

    const { context, page } = await newPage(PHONE)
    const served = await page.goto(`${uri}?user_code=${userCode}`)
    expect(served?.headers()['content-security-policy']).toContain("frame-ancestors 'none'")
    await shot(page, 'device-sign-in')
    await signInOnPage(page, `device-${Date.now()}@example.com`)
    await page.locator('#workspace option').first().waitFor({ state: 'attached' })
    expect(await page.inputValue('#user-code')).toBe(userCode)
    await page.locator('#device-client', { hasText: /“cutout-cli on .+” asks to sign in as you/ }).waitFor()
    await shot(page, 'device-approve')
    await page.click('#approve-form button')
    await page.locator('#approved').waitFor()
    await shot(page, 'device-approved')

    const [code] = await exited
    expect(code, stderr).toBe(0)
    const session = join(config, 'cutout', 'session.json')
    expect(statSync(session).mode & 0o777).toBe(0o600)
    expect(JSON.parse(readFileSync(session, 'utf8'))).toMatchObject({ refreshToken: expect.stringMatching(/^rt_/) })

    // A code that is not live: the API's problem is shown beside the form.
    await page.goto(`${uri}?user_code=BCDF-GHJK`)
    await page.locator('#workspace option').first().waitFor({ state: 'attached' })
    await page.click('#approve-form button')
    await page.locator('#approve-error').waitFor()
    expect(await page.locator('#approve-error').textContent()).not.toBe('')
    await context.close()
  })
})

describe('/device in a frame', () => {
  let framer: Server
  beforeAll(async () => {
    // Another origin (its own port) that puts /device under a decoy, as a clickjacking site would.
    framer = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' })
      res.end(`<!doctype html><p>Win a prize!</p><iframe src="${stack.baseUrl}/device?user_code=BCDF-GHJK"></iframe>`)
    })
    framer.listen(0, '127.0.0.1')
    await once(framer, 'listening')
  })
  afterAll(() => framer?.close())

  it('is refused: the framing page shows none of it and Chromium names frame-ancestors', async () => {
    // Not newPage: the refusal is the violation this test expects.
    const context = await browser.newContext()
    const page = await context.newPage()
    const logged: string[] = []
    page.on('console', (message) => void logged.push(message.text()))
    await page.goto(`http://127.0.0.1:${(framer.address() as AddressInfo).port}/`, { waitUntil: 'load' })
    const frame = page.frames().find((f) => f !== page.mainFrame())
    expect(frame).toBeDefined()
    await expect.poll(() => logged.join('\n'), { timeout: 10_000 }).toMatch(/frame-ancestors 'none'/)
    expect(await frame!.locator('#approve-form').count()).toBe(0)
    await context.close()
  })
})
