/**
 * @module
 * Failures told in plain words. An exception's text is the runtime's, and it may quote the URL it
 * was fetching, query string and all (a webhook receiver's token, a signed link's signature):
 * what is stored for a user to read (a delivery's `lastError`) or written to the logs says what
 * happened, never that text verbatim, and never a URL's query, fragment or credentials.
 */

/** An http(s) URL inside free text: up to a space, a quote or a closing bracket. */
const URL_IN_TEXT = /\bhttps?:\/\/[^\s"'<>`)\]]+/gi

/** `url` without its query, fragment and credentials: its origin and path. */
export function withoutQuery(url: string): string {
  try {
    const parsed = new URL(url)
    return `${parsed.origin}${parsed.pathname}`
  } catch {
    return url.replace(/[?#].*$/, '').replace(/\/\/[^/@]*@/, '//')
  }
}

/** `text` with every http(s) URL in it cut to its origin and path (see {@link withoutQuery}). */
export const redactUrls = (text: string): string => text.replace(URL_IN_TEXT, (url) => withoutQuery(url))

/**
 * The runtime's wording of a network failure, read from the error and its causes, with URLs taken
 * out (a path such as `/closed-orders` must not read as a closed connection).
 */
function errorText(err: unknown): string {
  const parts: string[] = []
  for (let e: unknown = err, depth = 0; e !== undefined && e !== null && depth < 4; depth++) {
    parts.push(e instanceof Error ? `${e.name} ${e.message}` : String(e))
    e = e instanceof Error ? e.cause : undefined
  }
  return parts.join(' ').replace(URL_IN_TEXT, '')
}

/**
 * Why a request to another server got no answer, in plain words: a time-out, a refused or dropped
 * connection (which workerd does not tell apart), a name that did not resolve, a TLS failure, or "Could not connect".
 *
 * @example connectionFailureReason(new TypeError('connect ECONNREFUSED'), 15_000) // 'Connection refused'
 */
export function connectionFailureReason(err: unknown, timeoutMs: number): string {
  const text = errorText(err)
  if (/timeout|timed out|aborted|AbortError/i.test(text)) return `No response within ${timeoutMs / 1000} s`
  if (/refused/i.test(text)) return 'Connection refused'
  // workerd says "Network connection lost." both when nothing listens and when the peer hangs up.
  if (/connection lost/i.test(text)) return 'Connection refused or closed before an answer'
  if (/reset|disconnected|closed|EOF|socket hang up|pipe/i.test(text)) {
    return 'The connection closed before an answer'
  }
  if (/dns|resolve|ENOTFOUND|EAI_AGAIN|host/i.test(text)) return 'The host name did not resolve'
  if (/tls|ssl|certificate|handshake/i.test(text)) return 'The TLS handshake failed'
  return 'Could not connect'
}

/**
 * An error as a log line may carry it: its name and message, with every URL cut to its origin
 * and path, at most 300 characters.
 */
export function errorSummary(err: unknown): string {
  const text = err instanceof Error ? `${err.name}: ${err.message}` : String(err)
  return redactUrls(text).slice(0, 300)
}
