/**
 * The page's requests follow the SDK client's rules (web/src/api.ts over sdk/src/client.ts), not
 * rules of its own, in headless Chromium against the real local stack: a request safe to repeat
 * that meets a passing 503 is sent again and the page carries on, as every SDK user's would; a
 * POST that /openapi.json does not mark safe to repeat is sent once and its problem is shown as
 * the API worded it. The answers to refuse are made by the test (playwright's routing) so the
 * outage is certain; everything else reaches the stack.
 */
import type { Browser, Page, Route } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { launchChromium } from '../../test/helpers/browser'
import { type E2eStack, e2eStack } from '../../test/helpers/e2e-stack'

let stack: E2eStack
let browser: Browser

beforeAll(async () => {
  stack = e2eStack()
  browser = await launchChromium()
})
afterAll(async () => {
  await browser?.close()
})

const UNAVAILABLE = {
  type: 'about:blank',
  status: 503,
  code: 'service_unavailable',
  title: 'Service unavailable',
  detail: 'The service is briefly unavailable; try again.',
  retryable: true,
}

/**
 * Answers the first `count` requests to `path` with a 503 problem, then lets them through; returns
 * the method of every request to `path`, as they come.
 */
async function unavailableFirst(page: Page, path: string, count: number): Promise<string[]> {
  const seen: string[] = []
  await page.route(
    (url) => url.pathname === path,
    async (route: Route) => {
      seen.push(route.request().method())
      if (seen.length > count) return route.fallback()
      await route.fulfill({
        status: 503,
        contentType: 'application/problem+json',
        body: JSON.stringify(UNAVAILABLE),
      })
    },
  )
  return seen
}

describe('the page’s requests, on the SDK’s transport', () => {
  it('sends a GET again after a passing 503 and shows its answer; sends a POST the document does not mark repeatable once', async () => {
    const context = await browser.newContext()
    const page = await context.newPage()
    const usage = await unavailableFirst(page, '/v1/usage', 1)
    const start = await unavailableFirst(page, '/v1/auth/email/start', 1)
    await page.goto(stack.baseUrl)

    // The allowance line reads GET /v1/usage: the 503 is retried, and the line shows the answer.
    await page.locator('#allowance', { hasText: /Free preview: \d+ of \d+ left today/ }).waitFor()
    expect(usage).toEqual(['GET', 'GET'])

    // POST /v1/auth/email/start is `once` in /openapi.json (it sends an email): not sent again.
    await page.fill('#sign-in-email', `transport-${Date.now()}@example.com`)
    await page.click('#sign-in-email-form button')
    await page.locator('#sign-in-error', { hasText: UNAVAILABLE.detail }).waitFor()
    await page.waitForTimeout(1_000)
    expect(start).toEqual(['POST'])
    await context.close()
  })
})
