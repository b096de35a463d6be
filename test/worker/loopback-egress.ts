/**
 * The Worker's global `fetch` as production has it, behind a loopback-only egress, for tests that
 * run the real SSRF path (test/worker/dns.test.ts).
 *
 * Why replace anything: @cloudflare/vitest-plugin replaces `globalThis.fetch` with an arrow
 * function (`(input, init) => originalFetch.call(globalThis, input, init)`, so MSW can intercept
 * it). The tests and the Worker share that global, so code that stores `fetch` in a field and calls
 * it as a method passes every test and fails in `wrangler dev` and production with "Illegal
 * invocation: function called with incorrect this reference". The replacement installed here calls
 * workerd's own `fetch` with the receiver it was given, so that mistake fails here as it does there.
 *
 * Why loopback only: the SSRF guard lets public addresses through, and the Worker then fetches
 * them. Tests must send nothing to any non-loopback address, and workerd would even resolve a name
 * such as `public.example` through the system resolver (not on loopback) before connecting. So a
 * URL whose host is not `127.0.0.1` is refused here, before workerd sees it, with a TypeError (what
 * a failed connection looks like to the Worker), and recorded in `refused`.
 */

type Fetch = typeof fetch

/** workerd's `fetch`, from the global scope's prototype (the pool shadows it with an own property). */
const nativeFetch = (Object.getPrototypeOf(globalThis) as { fetch?: Fetch }).fetch

export const EGRESS_REFUSAL = 'refused by the test egress (loopback only); nothing was sent'
/** workerd's message for a `fetch` called with another receiver than the global scope. */
const ILLEGAL_INVOCATION = 'Illegal invocation: function called with incorrect `this` reference.'

export interface LoopbackEgress {
  /** Every URL the Worker (or the test) tried to fetch off loopback, in order. */
  refused: string[]
  /** Puts back the `fetch` that was there before. */
  restore(): void
}

export function installLoopbackEgress(): LoopbackEgress {
  if (typeof nativeFetch !== 'function' || !/\[native code\]/.test(Function.prototype.toString.call(nativeFetch))) {
    throw new Error('workerd’s native fetch is not on the global prototype; the egress cannot be installed')
  }
  const native = nativeFetch
  const previous = globalThis.fetch
  const refused: string[] = []
  // A plain function, not an arrow: it must see the receiver the caller used.
  globalThis.fetch = function loopbackFetch(this: unknown, input: RequestInfo | URL, init?: RequestInit) {
    const url = new URL(input instanceof Request ? input.url : String(input))
    if (url.hostname !== '127.0.0.1') {
      // workerd checks the receiver before anything else; do the same without handing it the URL.
      if (this !== undefined && this !== globalThis) throw new TypeError(ILLEGAL_INVOCATION)
      refused.push(url.href)
      return Promise.reject(new TypeError(`${url.origin} ${EGRESS_REFUSAL}`))
    }
    return Reflect.apply(native, this, [input, init]) as Promise<Response>
  } as Fetch
  return {
    refused,
    restore() {
      globalThis.fetch = previous
    },
  }
}
