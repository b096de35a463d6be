/**
 * @module
 * The security headers (DESIGN.md §3 "Page security"), written once: the web page's static assets
 * get {@link PAGE_SECURITY_HEADERS} through the `_headers` file `scripts/build-web.ts` writes into
 * web/dist (the assets are served without running the Worker), and every response of the Worker
 * gets {@link API_SECURITY_HEADERS} from {@link securityHeaders}. It needs no bindings, so it is
 * typed without `AppEnv`: the build script imports this module under Node's types.
 */
import { createMiddleware } from 'hono/factory'

/**
 * What the page may load. No inline script or style (the page has none: one bundled module and one
 * stylesheet per page); `blob:` images are the before/after previews the page makes from the
 * files and results it holds; a signed-in upload may PUT straight to a presigned R2 URL
 * (`src/services/presign.ts`). `frame-ancestors 'none'` stops clickjacking of /device's Approve.
 */
export const PAGE_CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' blob: data:",
  "connect-src 'self' https://*.r2.cloudflarestorage.com",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ')

/** Every page and asset (HTML, JS, CSS, source maps). `X-Frame-Options` for browsers without CSP 3. */
export const PAGE_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': PAGE_CONTENT_SECURITY_POLICY,
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'strict-origin-when-cross-origin',
}

/**
 * Every API response (JSON, problems, result images, event streams). No CSP: a result opened in a
 * tab is an image document, and the API serves no HTML to constrain.
 */
export const API_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'strict-origin-when-cross-origin',
}

/**
 * The API reference at /docs only: its renderer (Scalar's standalone build, a file from this origin)
 * injects its stylesheet as a `<style>` element and sets style attributes, which `style-src 'self'`
 * refuses. Styles alone are loosened, on this one page, which holds no secret and no form: script
 * stays `'self'` (no inline script, no eval), so injected markup still cannot run code
 * (docs/decisions.md, "API reference at /docs").
 */
export const DOCS_CONTENT_SECURITY_POLICY = PAGE_CONTENT_SECURITY_POLICY.replace(
  "style-src 'self'",
  "style-src 'self' 'unsafe-inline'",
)

/**
 * Wrangler's `_headers` format: every path (`/*`) gets the page headers; /docs detaches (`!`) the
 * page CSP and sets its own, since two matching rules' values would otherwise be joined into two
 * policies, both enforced.
 */
export function assetHeadersFile(): string {
  const lines = Object.entries(PAGE_SECURITY_HEADERS).map(([name, value]) => `  ${name}: ${value}`)
  const docs = ['  ! Content-Security-Policy', `  Content-Security-Policy: ${DOCS_CONTENT_SECURITY_POLICY}`]
  return `/*\n${lines.join('\n')}\n/docs\n${docs.join('\n')}\n`
}

/** Sets {@link API_SECURITY_HEADERS} on every response, errors and 404s included. */
export const securityHeaders = () =>
  createMiddleware(async function securityHeaders(c, next) {
    await next()
    for (const [name, value] of Object.entries(API_SECURITY_HEADERS)) c.res.headers.set(name, value)
  })
