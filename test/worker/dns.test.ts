/**
 * The SSRF guard's production DNS path, end to end through the public API: no injected resolver
 * and no `fetchImpl`. The Worker's `DohResolver` asks the DNS-over-HTTPS server on 127.0.0.1
 * (`DNS_RESOLVER_URL`, test/helpers/doh-server.ts), which answers a public address for
 * `public.example`, a private one for `private.example`, and NXDOMAIN for anything else.
 * test/worker/ssrf.test.ts covers the guard's rules with fakes; this file covers the wiring.
 *
 * The global `fetch` here is workerd's own behind a loopback-only egress (./loopback-egress.ts):
 * the pool's replacement would hide a `fetch` called with the wrong `this`, which is how every
 * public host once failed with "Illegal invocation" in production while these tests passed.
 *
 * How a public address is tested without contacting it: the guard's decision is observed at the
 * egress. Once the guard has let `https://public.example/a.jpg` through, the Worker's fetch of it
 * reaches the egress, which refuses it before workerd resolves or connects anything (not even the
 * system DNS is asked), records the URL, and fails the fetch as a network error would. So the
 * removal answers 400 `invalid_input` "Could not fetch …" (a fetch failure) instead of 422
 * `unsafe_url`, and the egress shows that exactly that URL was attempted. No packet leaves loopback.
 */
import { env } from 'cloudflare:test'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { expectProblem, RAW_CUTOUT, removal, seedWorkspace, usage } from './helpers'
import { EGRESS_REFUSAL, installLoopbackEgress, type LoopbackEgress } from './loopback-egress'
import { createWebhook, listDeliveries } from './webhook-helpers'

let egress: LoopbackEgress

beforeAll(() => {
  // The resolver must be the local DoH server: the egress would refuse anything else anyway.
  expect(new URL(env.DNS_RESOLVER_URL).hostname).toBe('127.0.0.1')
  egress = installLoopbackEgress()
})
afterAll(() => egress.restore())
beforeEach(() => {
  egress.refused.length = 0
})

describe('SSRF guard with the real DNS-over-HTTPS resolver', () => {
  it('registers a webhook to a name that resolves to a public address, and delivers nothing', async () => {
    const { key } = await seedWorkspace()
    const res = await createWebhook(key, { url: 'https://public.example/hooks' })
    const text = await res.text()
    expect(res.status, text).toBe(201)
    const created = JSON.parse(text) as { id: string; url: string }
    expect(created.url).toBe('https://public.example/hooks')

    // Registering only checks the URL: no event, so no delivery, and nothing went off loopback.
    expect(await listDeliveries(key, created.id)).toEqual([])
    expect(egress.refused).toEqual([])
  })

  it('refuses a sourceUrl whose name resolves to a private address: 422 unsafe_url, nothing charged', async () => {
    const { key } = await seedWorkspace()
    const res = await removal(key, { sourceUrl: 'https://private.example/a.jpg', options: RAW_CUTOUT })
    const body = await expectProblem(res, 422, 'unsafe_url', 'sourceUrl')
    expect(body.detail).toMatch(/private\.example resolves to 10\.0\.0\.5, a private address/)
    expect(await usage(key)).toMatchObject({ held: 0, used: 0 })
    expect(egress.refused).toEqual([])
  })

  it('lets a sourceUrl whose name resolves to a public address through the guard (then the fetch fails)', async () => {
    const { key } = await seedWorkspace()
    const res = await removal(key, { sourceUrl: 'https://public.example/a.jpg', options: RAW_CUTOUT })
    // A fetch failure (400 invalid_input), not a refusal by the guard (422 unsafe_url) nor a DNS error.
    const body = await expectProblem(res, 400, 'invalid_input', 'sourceUrl')
    // Our own words: the runtime's exception text (the egress refusal) stays out of the problem.
    expect(body.detail).toBe('Could not fetch https://public.example/a.jpg: the host could not be reached')
    expect(body.detail).not.toContain(EGRESS_REFUSAL)
    // The guard passed it on exactly once; the egress stopped it before any lookup or connection.
    expect(egress.refused).toEqual(['https://public.example/a.jpg'])
    expect(await usage(key)).toMatchObject({ held: 0, used: 0 })
  })
})
