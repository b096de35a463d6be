/**
 * @module
 * SSRF guard: fetches a user-supplied URL (`sourceUrl`, later webhook URLs) only when every hop
 * points at a public HTTP(S) address (SPEC.md §4 "Source URLs").
 *
 * What it checks, for the first URL and again for every redirect hop:
 * - scheme is http or https, and the URL has no embedded credentials;
 * - an IP literal (any spelling `new URL()` accepts, IPv6 with embedded IPv4 included) is public;
 * - a hostname is not a local or metadata name, and EVERY A and AAAA answer is public (no answers
 *   is a refusal: we cannot check what we cannot see);
 * - at most {@link DEFAULT_MAX_REDIRECTS} redirects, followed by hand so each is re-checked.
 *
 * The remaining DNS-rebinding window: Workers cannot pin the address they checked for `fetch()`;
 * the runtime resolves the hostname again when it connects, so a hostile DNS server with a
 * zero TTL can answer the guard with a public address and the fetch with a private one. This
 * guard closes every other path; that window is closed in production by Cloudflare's own egress,
 * which refuses to connect a Worker's subrequest to private, loopback or link-local targets.
 * Local mode (workerd) has no such egress filter, which is why the allow-list is test/dev only.
 */
import { classifyIp, endsInNumber } from '../lib/ip'
import { withoutQuery } from '../lib/failure'
import { concatBytes } from '../lib/bytes'

export const DEFAULT_MAX_REDIRECTS = 5
const ALLOWED_PROTOCOLS = new Set(['http:', 'https:'])
const DEFAULT_PORTS: Record<string, string> = { 'http:': '80', 'https:': '443' }
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308])
/** Names that reach the machine itself or a cloud metadata service. */
const BLOCKED_HOSTNAMES = new Set(['localhost', 'metadata', 'metadata.google.internal', 'instance-data'])
/** Suffixes reserved for local or private networks (RFC 6761, RFC 6762, RFC 8375). */
const BLOCKED_SUFFIXES = ['.localhost', '.local', '.internal', '.localdomain', '.home.arpa']
/** CNAME hops the resolver follows when an answer stops at an alias (RFC 1034 loops are cut). */
const MAX_CNAME_HOPS = 8
const DNS_TYPE = { A: 1, CNAME: 5, AAAA: 28 } as const

/** The URL (or a redirect hop) points somewhere the guard refuses. Maps to 422 `unsafe_url`. */
export class UnsafeUrlError extends Error {
  override name = 'UnsafeUrlError'
  constructor(
    readonly reason: string,
    readonly url?: string,
  ) {
    super(url ? `Refusing to fetch ${url}: ${reason}` : `Refusing to fetch URL: ${reason}`)
  }
}

/** The source could not be fetched (network, non-2xx). Maps to 400 `invalid_input`, `sourceUrl`. */
export class SourceFetchError extends Error {
  override name = 'SourceFetchError'
  constructor(
    message: string,
    readonly status?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options)
  }
}

/** The source did not send its whole body within `timeoutMs`. Maps to 400 `invalid_input`, `sourceUrl`. */
export class SourceTimeoutError extends SourceFetchError {
  override name = 'SourceTimeoutError'
  constructor(readonly timeoutMs: number) {
    super(`The source did not answer within ${formatSeconds(timeoutMs)}`)
  }
}

/** `10_000` → "10 s", `1_500` → "1.5 s": how a bound reads in a problem. */
export function formatSeconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(3))} s`
}

/** The source is larger than `maxBytes` (by Content-Length, or while streaming). */
export class SourceTooLargeError extends SourceFetchError {
  override name = 'SourceTooLargeError'
  constructor(readonly maxBytes: number) {
    super(`Expected source of at most ${maxBytes} bytes but received more`)
  }
}

/** Every A and AAAA address a hostname resolves to. */
export interface Resolver {
  resolve(hostname: string): Promise<string[]>
}

type DohAnswer = { name?: string; type: number; data: string }
type DohResponse = { Status: number; Answer?: DohAnswer[] }

/**
 * Resolver over DNS-over-HTTPS (JSON API, as served by cloudflare-dns.com): the only way a Worker
 * can see the addresses behind a name.
 * @example new DohResolver({ url: env.DNS_RESOLVER_URL }).resolve('example.com')
 */
export class DohResolver implements Resolver {
  readonly #url: string
  readonly #fetch: typeof fetch

  constructor({ url, fetchImpl }: { url: string; fetchImpl?: typeof fetch }) {
    this.#url = url
    // Never keep the global `fetch` itself in a field: `this.#fetch(…)` would call it with this
    // resolver as its `this`, which workerd refuses ("Illegal invocation"). Wrap it instead.
    this.#fetch = fetchImpl ?? ((input, init) => fetch(input, init))
  }

  async resolve(hostname: string): Promise<string[]> {
    const [a, aaaa] = await Promise.all([
      this.#query(hostname, 'A', DNS_TYPE.A),
      this.#query(hostname, 'AAAA', DNS_TYPE.AAAA),
    ])
    return [...a, ...aaaa]
  }

  async #query(name: string, type: 'A' | 'AAAA', wanted: number, hops = 0): Promise<string[]> {
    const url = new URL(this.#url)
    url.searchParams.set('name', name)
    url.searchParams.set('type', type)
    const res = await this.#fetch(url.toString(), { headers: { accept: 'application/dns-json' } })
    if (!res.ok) throw new Error(`DNS-over-HTTPS query for ${name} ${type} returned ${res.status}`)
    const body = (await res.json()) as DohResponse
    // 0 = NOERROR, 3 = NXDOMAIN (no addresses); anything else (SERVFAIL, REFUSED) is a failure.
    if (body.Status === 3) return []
    if (body.Status !== 0) throw new Error(`DNS query for ${name} ${type} failed (${body.Status})`)
    const answers = body.Answer ?? []
    // The answer section carries the whole CNAME chain; every address in it counts, whichever
    // name it hangs off, so nothing the client could connect to escapes the check.
    const addresses = answers.filter((r) => r.type === wanted).map((r) => r.data.trim())
    if (addresses.length > 0) return addresses
    // An alias with no addresses beside it: follow the chain's last target ourselves.
    const alias = answers.filter((r) => r.type === DNS_TYPE.CNAME).at(-1)
    if (!alias || hops >= MAX_CNAME_HOPS) return []
    return this.#query(alias.data.replace(/\.$/, ''), type, wanted, hops + 1)
  }
}

export interface GuardedFetchOptions {
  resolver: Resolver
  /** `host` or `host:port` entries exempt from the address checks (tests and local dev only). */
  allowlist: string[]
  /** Redirects to follow; the next one is refused. Default {@link DEFAULT_MAX_REDIRECTS}. */
  maxRedirects?: number
  /** Largest body accepted; checked on Content-Length and while the body streams. */
  maxBytes?: number
  signal?: AbortSignal
  fetchImpl?: typeof fetch
}

/** `SSRF_ALLOWLIST` as a list; always empty in production, whatever the variable says. */
export function allowlistFromEnv(env: { SSRF_ALLOWLIST?: string; ENVIRONMENT?: string }): string[] {
  if (env.ENVIRONMENT === 'production') return []
  return (env.SSRF_ALLOWLIST ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
}

/** Splits an allow-list entry into a normalised host (as `URL.hostname` spells it) and port. */
function parseAllowEntry(entry: string): { host: string; port?: string } | null {
  const m = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(entry.trim())
  const [hostPart, port] = m ? [m[1], m[2]] : [`[${entry.trim()}]`, undefined] // bare IPv6
  try {
    return { host: new URL(`http://${hostPart}/`).hostname, port }
  } catch {
    return null
  }
}

/** True when `url`'s host (and port, if the entry names one) is on the allow-list. */
export function isAllowlisted(url: URL, allowlist: string[]): boolean {
  const port = url.port || DEFAULT_PORTS[url.protocol]
  return allowlist.some((entry) => {
    const parsed = parseAllowEntry(entry)
    return parsed !== null && parsed.host === url.hostname && (!parsed.port || parsed.port === port)
  })
}

/** "a loopback address", "an IETF protocol assignment", "a unique-local address". */
const withArticle = (reason: string) => (/^(?:[aeioI]|u(?!ni))/.test(reason) ? 'an ' : 'a ') + reason

function blockedHostname(hostname: string): string | null {
  const name = hostname.toLowerCase().replace(/\.+$/, '')
  if (BLOCKED_HOSTNAMES.has(name)) return `${name} is a local or metadata hostname`
  const suffix = BLOCKED_SUFFIXES.find((s) => name.endsWith(s))
  if (suffix) return `hostnames ending ${suffix} are local`
  // A single label is resolved through search domains on many networks (intranet names).
  if (!name.includes('.')) return `single-label hostname ${name} is not public`
  return null
}

/** What {@link checkUrl} needs: how to resolve names and which hosts skip the address checks. */
export type UrlCheckOptions = Pick<GuardedFetchOptions, 'resolver' | 'allowlist'>

/**
 * Checks a URL without fetching it (a webhook endpoint when it is registered): the same rules as
 * every hop of {@link guardedFetch}. Returns it parsed.
 * @throws {UnsafeUrlError} scheme, credentials, address or DNS refused
 * @example await checkUrl(url, { resolver: new DohResolver({ url: env.DNS_RESOLVER_URL }), allowlist })
 */
export async function checkUrl(raw: string, opts: UrlCheckOptions): Promise<URL> {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new UnsafeUrlError('not a valid URL', raw)
  }
  const shown = url.toString()
  if (!ALLOWED_PROTOCOLS.has(url.protocol)) {
    throw new UnsafeUrlError(`Expected http or https scheme but received ${url.protocol}`, shown)
  }
  if (url.username || url.password) throw new UnsafeUrlError('URL has embedded credentials', shown)
  if (isAllowlisted(url, opts.allowlist)) return url

  const host = url.hostname
  const literal = classifyIp(host)
  if (literal) {
    if (literal.blocked) {
      throw new UnsafeUrlError(`${literal.ip} is ${withArticle(literal.blocked)}`, shown)
    }
    return url
  }
  // Something numeric that is not an address: refuse rather than guess how it will be read.
  if (endsInNumber(host)) throw new UnsafeUrlError(`${host} is not a valid address`, shown)
  const named = blockedHostname(host)
  if (named) throw new UnsafeUrlError(named, shown)

  let addresses: string[]
  try {
    addresses = await opts.resolver.resolve(host.replace(/\.+$/, ''))
  } catch {
    // The resolver's own error text (a network error's, say) is not the client's business.
    throw new UnsafeUrlError(`DNS lookup for ${host} failed`, shown)
  }
  if (addresses.length === 0) throw new UnsafeUrlError(`${host} has no A or AAAA records`, shown)
  for (const address of addresses) {
    const ip = classifyIp(address)
    if (!ip) throw new UnsafeUrlError(`${host} resolves to unparseable ${address}`, shown)
    if (ip.blocked) {
      throw new UnsafeUrlError(`${host} resolves to ${ip.ip}, ${withArticle(ip.blocked)}`, shown)
    }
  }
  return url
}

/** Wraps a body so it errors once more than `maxBytes` have passed through. */
function limitBody(body: ReadableStream<Uint8Array>, maxBytes: number): ReadableStream<Uint8Array> {
  let seen = 0
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        seen += chunk.byteLength
        if (seen > maxBytes) controller.error(new SourceTooLargeError(maxBytes))
        else controller.enqueue(chunk)
      },
    }),
  )
}

/**
 * Fetches a user-supplied URL with GET, refusing private targets on every hop.
 * @throws {UnsafeUrlError} scheme, credentials, address, DNS or redirect count refused
 * @throws {SourceFetchError} network failure or a final status that is not 2xx
 * @example await guardedFetch(sourceUrl, { resolver, allowlist: allowlistFromEnv(env), maxBytes })
 */
export async function guardedFetch(url: string, opts: GuardedFetchOptions): Promise<Response> {
  const { maxRedirects = DEFAULT_MAX_REDIRECTS, maxBytes, signal, fetchImpl = fetch } = opts
  let current = url
  for (let redirects = 0; ; redirects++) {
    const target = await checkUrl(current, opts)
    signal?.throwIfAborted()
    let res: Response
    try {
      res = await fetchImpl(target.toString(), { redirect: 'manual', signal })
    } catch (err) {
      if (signal?.aborted) throw err
      // Plain words only: the runtime's exception text goes to the cause, never to a problem.
      throw new SourceFetchError(`Could not fetch ${target}: the host could not be reached`, undefined, {
        cause: err,
      })
    }
    if (REDIRECT_STATUSES.has(res.status) && res.headers.has('location')) {
      await res.body?.cancel()
      if (redirects >= maxRedirects) {
        throw new UnsafeUrlError(`more than ${maxRedirects} redirects`, target.toString())
      }
      try {
        current = new URL(res.headers.get('location') as string, target).toString()
      } catch {
        throw new SourceFetchError(`Redirect from ${target} has an invalid Location`, res.status)
      }
      continue
    }
    if (!res.ok) {
      await res.body?.cancel()
      const message = `Expected 2xx status from ${target} but received ${res.status}`
      throw new SourceFetchError(message, res.status)
    }
    if (maxBytes === undefined || !res.body) return res
    const length = Number(res.headers.get('content-length'))
    if (length > maxBytes) {
      await res.body.cancel()
      throw new SourceTooLargeError(maxBytes)
    }
    return new Response(limitBody(res.body, maxBytes), res)
  }
}

/**
 * Fetches a user-supplied URL with {@link guardedFetch} and reads its whole body, all within
 * `timeoutMs`: DNS, every hop and the body share one deadline, so a source that never answers
 * (or trickles) cannot hold the request. The one way a `sourceUrl` is fetched (removals and
 * try-ons alike).
 * @throws {SourceTimeoutError} the deadline passed first
 * @throws {UnsafeUrlError | SourceFetchError | SourceTooLargeError} as {@link guardedFetch}
 * @example await fetchSourceBytes(url, { resolver, allowlist, maxBytes, timeoutMs: 10_000 })
 */
export async function fetchSourceBytes(
  url: string,
  opts: Omit<GuardedFetchOptions, 'signal'> & { timeoutMs: number },
): Promise<Uint8Array> {
  const controller = new AbortController()
  let timer: ReturnType<typeof setTimeout> | undefined
  // A race rather than only the signal: a DNS-over-HTTPS lookup takes no signal, and a body may
  // stall without the runtime noticing the abort.
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const err = new SourceTimeoutError(opts.timeoutMs)
      controller.abort(err)
      reject(err)
    }, opts.timeoutMs)
  })
  const work = (async () => {
    const res = await guardedFetch(url, { ...opts, signal: controller.signal })
    if (!res.body) throw new SourceFetchError(`${url} answered with no body`)
    return readAll(res.body)
  })()
  // Once the deadline has won, the abandoned fetch's rejection belongs to no one.
  work.catch(() => undefined)
  try {
    return await Promise.race([work, deadline])
  } finally {
    if (timer !== undefined) clearTimeout(timer)
  }
}

/** Reads a body to its end (its size is already limited by {@link limitBody}). */
async function readAll(body: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  const chunks: Uint8Array[] = []
  let size = 0
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    chunks.push(chunk)
    size += chunk.byteLength
  }
  return concatBytes(chunks, size)
}

export interface GuardedPostOptions extends UrlCheckOptions {
  headers: HeadersInit
  body: string
  signal?: AbortSignal
  fetchImpl?: typeof fetch
}

/**
 * POSTs to a user-supplied URL (a webhook delivery) after the same checks as
 * {@link guardedFetch}. Redirects are NOT followed: the 3xx comes back to the caller, which treats
 * it as a failed attempt (a receiver must answer at the URL it registered). Any status is
 * returned; only refusal and network failure throw.
 * @throws {UnsafeUrlError} the URL is refused (it may have been safe when registered)
 * @throws {SourceFetchError} network failure or timeout (the signal's reason is the cause)
 * @example await guardedPost(url, { resolver, allowlist, headers, body, signal: AbortSignal.timeout(15_000) })
 */
export async function guardedPost(url: string, opts: GuardedPostOptions): Promise<Response> {
  const { headers, body, signal, fetchImpl = fetch } = opts
  const target = await checkUrl(url, opts)
  try {
    signal?.throwIfAborted()
    return await fetchImpl(target.toString(), { method: 'POST', headers, body, redirect: 'manual', signal })
  } catch (err) {
    const reason = signal?.aborted ? String(signal.reason ?? err) : (err as Error).message
    throw new SourceFetchError(`Could not POST to ${withoutQuery(target.toString())}: ${reason}`, undefined, {
      cause: err,
    })
  }
}
