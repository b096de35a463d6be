/** Signing in on the page as a person does: email, then the code read from the dev outbox. */
import type { Page } from 'playwright-core'
import { expect } from 'vitest'
import { outboxCode } from '../../test/helpers/local-stack'

/**
 * The page waits out a 429 with a short Retry-After up to twice (web/src/api.ts), so the code form
 * may take up to two minutes when this address has spent its anonymous requests for the minute.
 */
export const RATE_WAIT_MS = 2 * 61_000 + 5_000

export async function signInOnPage(page: Page, baseUrl: string, email: string): Promise<void> {
  await page.fill('#sign-in-email', email)
  await page.click('#sign-in-email-form button')
  await page.locator('#sign-in-code-form').waitFor({ timeout: RATE_WAIT_MS })
  // The local-mode hint links to the outbox; a person would read the code there.
  await expect(page.locator('#sign-in-hint a').getAttribute('href')).resolves.toContain('/v1/dev/outbox')
  await page.fill('#sign-in-code', await outboxCode(baseUrl, email))
  await page.click('#sign-in-code-form button')
  await page.locator('#signed-in-as').filter({ hasText: email }).waitFor()
}
