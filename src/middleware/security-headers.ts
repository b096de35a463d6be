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

/** Wrangler's `_headers` format: every path (`/*`) gets the page headers. */
export function assetHeadersFile(): string {
  const lines = Object.entries(PAGE_SECURITY_HEADERS).map(([name, value]) => `  ${name}: ${value}`)
  return `/*\n${lines.join('\n')}\n`
}

/** Sets {@link API_SECURITY_HEADERS} on every response, errors and 404s included. */
export const securityHeaders = () =>
  createMiddleware(async function securityHeaders(c, next) {
    await next()
    for (const [name, value] of Object.entries(API_SECURITY_HEADERS)) c.res.headers.set(name, value)
  })
