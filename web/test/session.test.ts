/**
 * The page's session across a lapsed access token, in headless Chromium against the real local
 * stack. An access token lives an hour; when it has lapsed, the page's first requests all need a
 * refresh at once, and a duplicated tab holds a copy of the same single-use refresh token. Before,
 * a reload sent four refreshes with one token, three were taken for reuse, and the API revoked the
 * session: the page signed its user out. Now one refresh is sent, the tabs follow each other, and
 * the session lives on; and a session the API will not renew ends on the page too (the SDK's
 * client and store behind web/src/api.ts: sdk/src/auth.ts, sdk/src/browser-session.ts, the API's
 * reuse window).
 */
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { launchChromium } from '../../test/helpers/browser'
import { type E2eStack, e2eStack } from '../../test/helpers/e2e-stack'
import { signInOnPage } from './sign-in'

let stack: E2eStack
let browser: Browser

beforeAll(async () => {
  stack = e2eStack()
  browser = await launchChromium()
})
afterAll(async () => {
  await browser?.close()
})

interface Stored {
  accessToken: string
  refreshToken: string
  expiresAt: number
}

// Evaluated as strings: this file is compiled for Node, without the DOM's types.
const stored = (page: Page) => page.evaluate<Stored>(`JSON.parse(sessionStorage.getItem('cutout.session'))`)

/** Makes the tab's access token look lapsed, as it is an hour after sign-in. */
const lapse = (page: Page) =>
  page.evaluate(`(() => {
    const session = JSON.parse(sessionStorage.getItem('cutout.session'))
    sessionStorage.setItem('cutout.session', JSON.stringify({ ...session, expiresAt: Date.now() - 1000 }))
  })()`)

/** The statuses of every `POST /v1/auth/refresh` the context's pages send, as they arrive. */
function refreshStatuses(context: BrowserContext): number[] {
  const statuses: number[] = []
  context.on('response', (res) => {
    if (new URL(res.url()).pathname === '/v1/auth/refresh') statuses.push(res.status())
  })
  return statuses
}

/** Reloads and waits for the signed-in page's history, which needs the (renewed) session. */
async function reload(page: Page): Promise<void> {
  // A 429 (the stack's short rate windows) is waited out by the page and sent again.
  const history = page.waitForResponse((res) => new URL(res.url()).pathname === '/v1/jobs' && res.status() !== 429)
  await page.reload()
  expect((await history).status()).toBe(200)
  // Answers to the other requests the page sent at the same moment (a refused refresh among them)
  // would arrive within this.
  await page.waitForTimeout(1_000)
}

const usageStatus = async (accessToken: string) =>
  (await fetch(new URL('/v1/usage', stack.baseUrl), { headers: { authorization: `Bearer ${accessToken}` } })).status

async function signedInPage(context: BrowserContext, who: string): Promise<Page> {
  const page = await context.newPage()
  await page.goto(stack.baseUrl)
  await signInOnPage(page, stack.baseUrl, `${who}-${Date.now()}@example.com`)
  return page
}

describe('the page with a lapsed access token', () => {
  it('reloads and stays signed in: one refresh for all its requests, and the new pair works', async () => {
    const context = await browser.newContext()
    const page = await signedInPage(context, 'lapsed')
    const before = await stored(page)
    const refreshes = refreshStatuses(context)
    await lapse(page)
    await reload(page)

    expect(refreshes).toEqual([200])
    expect(await page.locator('#signed-in').isVisible()).toBe(true)
    const after = await stored(page)
    expect(after.refreshToken).not.toBe(before.refreshToken)
    expect(after.expiresAt).toBeGreaterThan(Date.now())
    expect(await usageStatus(after.accessToken)).toBe(200)
    await context.close()
  })

  it('signs out when the API will not renew the session: one refused refresh, nothing kept', async () => {
    const context = await browser.newContext()
    const page = await signedInPage(context, 'revoked')
    // Signed out elsewhere (the CLI, another browser): the session is revoked at the API.
    const logout = await fetch(new URL('/v1/auth/logout', stack.baseUrl), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ refreshToken: (await stored(page)).refreshToken }),
    })
    expect(logout.ok).toBe(true)
    const refreshes = refreshStatuses(context)
    await lapse(page)
    await page.reload()
    await page.locator('#signed-out').waitFor()
    expect(await page.evaluate(`sessionStorage.getItem('cutout.session')`)).toBeNull()
    await page.waitForTimeout(500)
    expect(refreshes).toEqual([401])
    await context.close()
  })

  it('two tabs with one session stay signed in: both lapsed at once, then one alone, then sign-out in one ends both', async () => {
    const context = await browser.newContext()
    const a = await signedInPage(context, 'tabs')
    // "Duplicate tab": the new tab starts with a copy of the first one's sessionStorage.
    const [b] = await Promise.all([context.waitForEvent('page'), a.evaluate('void window.open(location.href)')])
    await b.locator('#signed-in-as').waitFor()
    expect(await stored(b)).toEqual(await stored(a))
    const refreshes = refreshStatuses(context)

    await Promise.all([lapse(a), lapse(b)])
    await Promise.all([reload(a), reload(b)])
    expect(refreshes.every((status) => status === 200)).toBe(true)
    for (const tab of [a, b]) expect(await tab.locator('#signed-in').isVisible()).toBe(true)
    expect((await stored(b)).refreshToken).toBe((await stored(a)).refreshToken)
    expect(await usageStatus((await stored(b)).accessToken)).toBe(200)

    // One tab refreshes alone: the other takes the new pair without a request of its own, so its
    // copy of the used refresh token is never sent again (hours later that would be a replay).
    await lapse(a)
    await reload(a)
    const renewed = await stored(a)
    await expect.poll(async () => (await stored(b)).refreshToken).toBe(renewed.refreshToken)
    await reload(b)
    expect(await b.locator('#signed-in').isVisible()).toBe(true)
    expect(refreshes.every((status) => status === 200)).toBe(true)

    await a.click('#sign-out')
    await b.locator('#signed-out').waitFor()
    expect(await b.evaluate(`sessionStorage.getItem('cutout.session')`)).toBeNull()
    await context.close()
  })
})
