/**
 * The `/errors/<code>` pages a problem's `type` names, and their index at `/errors`, written by
 * scripts/build-web.ts into web/dist from the one error table (src/error-codes.ts: status,
 * title, retryability and the help text), so a page cannot disagree with the problems the API sends.
 * Plain HTML with the page's stylesheets (styles.css, errors.css): no script, so the strict page CSP holds.
 */
import {
  ERROR_HELP,
  ERROR_STATUS,
  ERROR_TITLES,
  type ErrorCode,
  errorSlug,
  RETRYABLE_CODES,
} from '../../src/error-codes.ts'
import { siteHeader } from './site-header.ts'

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`)

/** Help text marks names with backticks; they become `<code>` after escaping. */
const prose = (text: string) => escapeHtml(text).replace(/`([^`]+)`/g, '<code>$1</code>')

const CODES = Object.keys(ERROR_STATUS) as ErrorCode[]

function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>${escapeHtml(title)} — Cutout API errors</title>
    <link rel="stylesheet" href="/styles.css" />
    <link rel="stylesheet" href="/errors.css" />
  </head>
  <body>
    ${siteHeader({ path: '/errors', signInHere: false })}
    <main class="narrow error-page">
${body}
    </main>
  </body>
</html>
`
}

function codePage(code: ErrorCode): string {
  const help = ERROR_HELP[code]
  const retryable = RETRYABLE_CODES.has(code)
  const example = {
    type: `https://<this service>/errors/${errorSlug(code)}`,
    status: ERROR_STATUS[code],
    code,
    title: ERROR_TITLES[code],
    detail: '…what went wrong with this request…',
    retryable,
    requestId: 'req_…',
  }
  return layout(
    ERROR_TITLES[code],
    `      <p class="error-status">HTTP ${ERROR_STATUS[code]} · <code>${code}</code></p>
      <h1>${escapeHtml(ERROR_TITLES[code])}</h1>
      <h2>What it means</h2>
      <p>${prose(help.meaning)}</p>
      <h2>Retry?</h2>
      <p><strong>${retryable ? 'Yes' : 'No'}</strong>: ${prose(help.retry)} Each problem's <code>retryable</code> field answers for that response.</p>
      <h2>What to fix</h2>
      <p>${prose(help.fix)}</p>
      <h2>The problem body</h2>
      <pre><code>${escapeHtml(JSON.stringify(example, null, 2))}</code></pre>
      <p>Every error is <code>application/problem+json</code>; quote its <code>requestId</code> when asking for help.</p>
      <p><a href="/errors">All error codes</a> · <a href="/docs">API reference</a></p>`,
  )
}

function indexPage(): string {
  const rows = CODES.map(
    (code) =>
      `        <tr><td>${ERROR_STATUS[code]}</td><td><a href="/errors/${errorSlug(code)}"><code>${code}</code></a></td><td>${escapeHtml(ERROR_TITLES[code])}</td></tr>`,
  ).join('\n')
  return layout(
    'Errors',
    `      <h1>Errors</h1>
      <p>Every error is an <code>application/problem+json</code> body whose <code>type</code> links to its page here.</p>
      <table>
        <thead><tr><th scope="col">HTTP</th><th scope="col">Code</th><th scope="col">Title</th></tr></thead>
        <tbody>
${rows}
        </tbody>
      </table>`,
  )
}

/** Each page's path under web/dist with its HTML: `errors.html` and `errors/<code>.html`. */
export function errorPages(): [string, string][] {
  return [
    ['errors.html', indexPage()],
    ...CODES.map((code): [string, string] => [`errors/${errorSlug(code)}.html`, codePage(code)]),
  ]
}
