/**
 * One header for every page (issue 30 item 5): in headless Chromium against the e2e stage's
 * shared stack, every page (home, editor, catalog, try-on, device, the API reference and the
 * error pages) shows the same navigation, with its own link marked as the current page. Signed
 * out, the links are the same everywhere; signed in, every page with a script adds the same
 * account links (History, API keys, Webhooks) and names who is signed in. The error pages run no
 * script (their CSP allows none) and show the signed-out header.
 */
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SITE_NAV } from '../../scripts/lib/site-header'
import { launchChromium } from '../../test/helpers/browser'
import { e2eStack } from '../../test/helpers/e2e-stack'
import { signInByEmail } from '../../test/helpers/local-stack'

/** Each page, with the nav link its own path marks as current (none for pages outside the nav). */
const SCRIPTED_PAGES = ['/', '/editor', '/catalog', '/try-on', '/device', '/docs']
const STATIC_PAGES = ['/errors', '/errors/asset-expired']

let browser: Browser
let baseUrl: string
let session: string
let email: string

beforeAll(async () => {
  baseUrl = e2eStack().baseUrl
  email = `nav-${Date.now()}@example.com`
  const [launched, verified] = await Promise.all([launchChromium(), signInByEmail(baseUrl, email)])
  browser = launched
  const v = verified as unknown as { expiresIn: number }
  session = JSON.stringify({ ...verified, expiresAt: Date.now() + v.expiresIn * 1000 })
})

afterAll(async () => {
  await browser?.close()
})

type Link = { label: string; href: string; current: boolean }

/**
 * The visible links of the page's site header (scripts/lib/site-header.ts), in order. The site
 * header is `header.bar`: a page's own content may hold other `<header>`s (the API reference's
 * operations on /docs do), but it has exactly one site header.
 */
async function navLinks(page: Page): Promise<Link[]> {
  expect(await page.locator('header.bar').count()).toBe(1)
  const links = page.locator('header.bar nav a')
  const out: Link[] = []
  for (let i = 0; i < (await links.count()); i++) {
    const link = links.nth(i)
    if (!(await link.isVisible())) continue
    out.push({
      label: (await link.innerText()).trim(),
      href: (await link.getAttribute('href')) ?? '',
      current: (await link.getAttribute('aria-current')) === 'page',
    })
  }
  return out
}

/**
 * Opens a page. (A retry after 15 s stood here: one CI run saw a static page's navigation hang for
 * 30 s. wrangler 4.86's dev proxy parked a GET whose connection to the runtime broke until the
 * next reload, which never came; wrangler 4.164 retries such a GET itself: docs/decisions.md,
 * issue 45.)
 */
async function goto(page: Page, url: string) {
  return page.goto(url, { waitUntil: 'load', timeout: 30_000 })
}

/**
 * One browser context per test, each page opened in turn in its tab: a new context per page
 * started a renderer each time (the file took 28.5 s alone that way, 19.5 s this way), and the
 * header is the page's own either way. Script errors are collected per page.
 */
async function openTab(signedIn: boolean): Promise<{ page: Page; errors: string[] }> {
  const context = await browser.newContext()
  if (signedIn) await context.addInitScript(`sessionStorage.setItem('cutout.session', ${JSON.stringify(session)})`)
  const page = await context.newPage()
  const errors: string[] = []
  page.on('pageerror', (err) => errors.push(err.message))
  return { page, errors }
}

async function visit(page: Page, path: string): Promise<Link[]> {
  const res = await goto(page, new URL(path, baseUrl).href)
  expect(res?.status(), path).toBe(200)
  return navLinks(page)
}

const expected = (signedIn: boolean, path: string) =>
  SITE_NAV.filter((link) => signedIn || !link.signedIn).map(({ label, href }) => ({
    label,
    href,
    current: href === path,
  }))

describe('the site header', () => {
  it('is the same navigation on every page, signed out', async () => {
    const { page, errors } = await openTab(false)
    for (const path of [...SCRIPTED_PAGES, ...STATIC_PAGES]) {
      expect(await visit(page, path), path).toEqual(expected(false, path))
      expect(await page.locator('#signed-out').isVisible(), `${path}: Sign in`).toBe(true)
      expect(errors.splice(0), path).toEqual([])
    }
    await page.context().close()
  })

  it('is the same navigation on every page with a script, signed in, with who is signed in', async () => {
    const { page, errors } = await openTab(true)
    for (const path of SCRIPTED_PAGES) {
      expect(await visit(page, path), path).toEqual(expected(true, path))
      await expect.poll(() => page.locator('#signed-in-as').innerText(), { timeout: 5000 }).toContain(email)
      expect(await page.locator('#sign-out').isVisible(), `${path}: Sign out`).toBe(true)
      expect(errors.splice(0), path).toEqual([])
    }
    await page.context().close()
  })
})
