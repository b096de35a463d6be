/**
 * The API reference at /docs and the error pages at /errors/<code> in headless Chromium against
 * the e2e stage's shared local stack (`npm start`: the Worker serving web/dist as static assets): /docs lists
 * every operation of /openapi.json with a curl and an SDK example and runs under its served CSP
 * with no violation; every code of the Problem schema has a 200 HTML page with the page security
 * headers; and a real problem's `type` is such a page on the service's own origin (DOCS_URL unset).
 * No model runs: nothing here is processed.
 *
 * SCREENSHOTS_DIR=docs/web writes the screenshots the docs show (see docs/web.md).
 */
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { launchChromium } from '../../test/helpers/browser'
import { type E2eStack, e2eStack } from '../../test/helpers/e2e-stack'

const SHOTS = process.env.SCREENSHOTS_DIR
const METHODS = ['get', 'put', 'post', 'patch', 'delete']

type OpenApi = {
  paths: Record<string, Record<string, unknown>>
  components: { schemas: { Problem: { properties: { code: { enum: string[] } } } } }
}

let stack: E2eStack
let browser: Browser
let document: OpenApi
const cspViolations: string[] = []

beforeAll(async () => {
  if (SHOTS) mkdirSync(SHOTS, { recursive: true })
  stack = e2eStack()
  browser = await launchChromium()
  document = (await (await fetch(new URL('/openapi.json', stack.baseUrl))).json()) as OpenApi
})

afterAll(async () => {
  await browser?.close()
})

afterEach(() => {
  // The renderer breaking under the CSP would leave a blank page in production only.
  expect(cspViolations.splice(0)).toEqual([])
})

/** A page whose CSP refusals (console and `securitypolicyviolation` events) are collected. */
async function newPage(viewport = { width: 1280, height: 900 }): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport })
  await context.addInitScript(`document.addEventListener('securitypolicyviolation', (e) =>
    console.error('CSP violation: ' + e.violatedDirective + ' blocked ' + e.blockedURI))`)
  context.on('console', (message) => {
    if (/Content Security Policy|CSP violation/.test(message.text())) cspViolations.push(message.text())
  })
  return { context, page: await context.newPage() }
}

/** `GET /v1/jobs`, … for every operation of the document. */
function operations(): string[] {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    METHODS.filter((m) => m in item).map((m) => `${m.toUpperCase()} ${path}`),
  )
}

const slug = (code: string) => code.replaceAll('_', '-')

/** The CSP's directives by name: `{ 'script-src': ["'self'"], … }`. */
const directives = (csp: string): Record<string, string[]> =>
  Object.fromEntries(
    csp
      .split(';')
      .map((d) => d.trim().split(/\s+/))
      .filter(([name]) => name)
      .map(([name, ...values]) => [name.toLowerCase(), values]),
  )

/** DESIGN.md §3 "Page security": no inline or eval'd script, framed by no one, nosniff, a referrer policy. */
function expectPageSecurity(res: Response): Record<string, string[]> {
  expect(res.headers.get('x-content-type-options')).toBe('nosniff')
  expect(res.headers.get('x-frame-options')).toBe('DENY')
  expect(res.headers.get('referrer-policy')).toBe('strict-origin-when-cross-origin')
  const csp = directives(res.headers.get('content-security-policy') ?? '')
  expect(csp).toMatchObject({ 'script-src': ["'self'"], 'frame-ancestors': ["'none'"], 'object-src': ["'none'"] })
  return csp
}

describe('/docs', () => {
  it('lists every operation of /openapi.json, with a curl and an SDK example, under its CSP', async () => {
    const { context, page } = await newPage()
    await page.goto(new URL('/docs', stack.baseUrl).href)
    // Collapsed groups keep their operations out of the sidebar: open each.
    const closed = page.getByRole('button', { name: /^Open Group/ })
    await page.locator('#reference [data-sidebar-id]').first().waitFor()
    while ((await closed.count()) > 0) await closed.first().click()
    const ids = await page
      .locator('#reference [data-sidebar-id]')
      .evaluateAll((items) => items.map((item) => item.getAttribute('data-sidebar-id') ?? ''))
    const listed = ids.flatMap((id) => {
      const match = /\/tag\/[^/]+\/(GET|PUT|POST|PATCH|DELETE)(\/.*)$/.exec(id)
      return match ? [`${match[1]} ${match[2]}`] : []
    })
    expect(operations().length).toBeGreaterThan(40)
    expect(listed.sort()).toEqual(operations().sort())

    await page.locator('[data-sidebar-id$="/POST/v1/removals"] a').click()
    const removal = page.locator('[id$="/POST/v1/removals"]')
    const origin = new URL(stack.baseUrl).origin
    await expect.poll(() => removal.innerText()).toContain(`curl ${origin}/v1/removals`)
    await shot(page, 'docs-reference', false)
    await removal.getByRole('button', { name: /Shell Curl/ }).click()
    await page.getByRole('option', { name: /SDK/ }).click()
    await expect.poll(() => removal.innerText()).toContain("cutout.api.POST('/v1/removals'")
    await context.close()
  })

  it('is served with the page security headers; only its styles may be inline', async () => {
    const res = await fetch(new URL('/docs', stack.baseUrl))
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toContain('text/html')
    expect(expectPageSecurity(res)['style-src']).toEqual(["'self'", "'unsafe-inline'"])
    // Every script is a file: none has a body of its own.
    expect(await res.text()).not.toMatch(/<script\b[^>]*>(?!\s*<\/script>)/)
  })
})

describe('/errors/<code>', () => {
  it('answers a 200 HTML page with the security headers for every code of the Problem schema', async () => {
    const codes = document.components.schemas.Problem.properties.code.enum
    expect(codes).toContain('asset_expired')
    for (const code of codes) {
      const res = await fetch(new URL(`/errors/${slug(code)}`, stack.baseUrl))
      expect(res.status, code).toBe(200)
      expect(res.headers.get('content-type')).toContain('text/html')
      expect(expectPageSecurity(res)['style-src']).toEqual(["'self'"])
      const html = await res.text()
      expect(html).toContain(`<code>${code}</code>`)
      expect(html).toMatch(/What it means[\s\S]*Retry\?[\s\S]*What to fix/)
      expect(html).not.toMatch(/<script\b/)
    }
  })

  it("a problem's `type` is a page on this origin saying what its code means, readable at 390 px", async () => {
    const problem = await fetch(new URL('/v1/jobs/00000000-0000-4000-8000-000000000000', stack.baseUrl), {
      headers: { authorization: `Bearer ${stack.apiKey}` },
    })
    expect(problem.status).toBe(404)
    const body = (await problem.json()) as { type: string; title: string; code: string }
    expect(body.type).toBe(`${new URL(stack.baseUrl).origin}/errors/job-not-found`)

    const { context, page } = await newPage({ width: 390, height: 844 })
    const res = await page.goto(body.type)
    expect(res?.status()).toBe(200)
    await expect.poll(() => page.locator('h1').textContent()).toBe(body.title)
    await page.goto(new URL('/errors/asset-expired', stack.baseUrl).href)
    expect(await page.locator('h1').textContent()).toBe('Asset expired')
    expect(await page.locator('main').innerText()).toMatch(/24 hours/)
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390)
    await shot(page, 'errors-asset-expired')
    await context.close()
  })
})

async function shot(page: Page, name: string, fullPage = true): Promise<void> {
  if (SHOTS) await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage })
}
