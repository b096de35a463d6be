import { describe, expect, it, vi } from 'vitest'
import { classifyIp, parseIPv4 } from '../../src/lib/ip'
import {
  allowlistFromEnv,
  DohResolver,
  guardedFetch,
  type Resolver,
  SourceFetchError,
  SourceTooLargeError,
  UnsafeUrlError,
} from '../../src/services/ssrf'

const PUBLIC_V4 = '93.184.215.14'
const PUBLIC_V6 = '2606:2800:21f:cb07:6820:80da:af6b:8b2c'

/** A resolver from a fixed table; unknown names have no records. */
function fakeResolver(table: Record<string, string[]> = {}) {
  const resolve = vi.fn(async (host: string) => table[host] ?? [])
  return { resolve } satisfies Resolver
}

/**
 * A fetch that never touches the network: answers from `routes` by exact URL (a string is a
 * redirect Location, a number a bare status), 200 "ok" otherwise. Every call is recorded.
 */
function fakeFetch(routes: Record<string, string | number | Response> = {}) {
  return vi.fn(async (input: RequestInfo | URL, _init?: RequestInit) => {
    const route = routes[String(input)]
    if (typeof route === 'string') {
      return new Response(null, { status: 302, headers: { location: route } })
    }
    if (typeof route === 'number') return new Response(null, { status: route })
    return route ?? new Response('ok')
  })
}
const calledUrls = (f: ReturnType<typeof fakeFetch>) => f.mock.calls.map(([u]) => String(u))

const resolver = fakeResolver({
  'example.com': [PUBLIC_V4, PUBLIC_V6],
  'cdn.example.net': [PUBLIC_V4],
})
type Options = Parameters<typeof guardedFetch>[1]
/** guardedFetch with the public resolver and no allow-list unless `extra` says otherwise. */
const guard = (url: string, extra: Partial<Options> = {}) =>
  guardedFetch(url, { resolver, allowlist: [], fetchImpl: fakeFetch(), ...extra })
const caught = (p: Promise<unknown>) => p.catch((e: unknown) => e)
const fetchFor = (url: string) => {
  const fetchImpl = fakeFetch()
  return { result: guard(url, { fetchImpl }), fetchImpl }
}

describe('guardedFetch refuses unsafe targets before fetching', () => {
  it.each([
    ['http://169.254.169.254/latest/meta-data/', /169\.254\.169\.254 is a link-local address/],
    ['http://[::ffff:127.0.0.1]/', /IPv4-mapped form of loopback address 127\.0\.0\.1/],
    ['http://[::ffff:7f00:1]/', /loopback address 127\.0\.0\.1/],
    ['http://2130706433/', /127\.0\.0\.1 is a loopback address/],
    ['http://0x7f000001/', /loopback/],
    ['http://017700000001/', /loopback/],
    ['http://0177.0.0.1/', /loopback/],
    ['http://0x7f.0.0.1/', /loopback/],
    ['http://127.1/', /loopback/],
    ['http://127.0.0.1./', /loopback/],
    ['http://[::1]:8080/', /loopback address/],
    ['http://[::]/', /unspecified address/],
    ['http://0.0.0.0/', /unspecified/],
    ['http://0/', /unspecified/],
    ['http://10.1.2.3/', /private address/],
    ['http://172.31.255.255/', /private address/],
    ['http://192.168.1.1/', /private address/],
    ['http://100.100.100.200/', /carrier-grade NAT/],
    ['http://198.18.0.1/', /benchmarking/],
    ['http://192.0.2.10/', /documentation/],
    ['http://203.0.113.5/', /documentation/],
    ['http://192.0.0.170/', /IETF protocol assignment/],
    ['http://224.0.0.251/', /multicast/],
    ['http://240.0.0.1/', /reserved/],
    ['http://255.255.255.255/', /reserved/],
    ['http://[fd00::1]/', /unique-local/],
    ['http://[fd00:ec2::254]/', /unique-local/],
    ['http://[fe80::1]/', /link-local/],
    ['http://[ff02::1]/', /multicast/],
    ['http://[::127.0.0.1]/', /IPv4-compatible form of loopback/],
    ['http://[::8.8.8.8]/', /IPv4-compatible address \(deprecated\)/],
    ['http://[64:ff9b::10.0.0.1]/', /NAT64 form of private address 10\.0\.0\.1/],
    ['http://[64:ff9b::a9fe:a9fe]/', /NAT64 form of link-local address 169\.254\.169\.254/],
    ['http://[2002:c0a8:101::1]/', /6to4 form of private address 192\.168\.1\.1/],
    ['http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/', /Teredo/],
    ['http://[2001:db8::1]/', /documentation/],
    ['http://[100::1]/', /discard-only/],
    ['http://localhost:8787/', /localhost is a local or metadata hostname/],
    ['http://LOCALHOST./', /localhost is a local/],
    ['http://api.localhost/', /ending \.localhost/],
    ['http://metadata.google.internal/computeMetadata/v1/', /metadata.google.internal is a local/],
    ['http://metadata/', /metadata is a local/],
    ['http://instance-data/', /instance-data is a local/],
    ['http://db.corp.internal/', /ending \.internal/],
    ['http://printer.local/', /ending \.local/],
    ['http://intranet/', /single-label hostname/],
    ['http://user:pass@example.com/', /embedded credentials/],
    ['http://user@example.com/', /embedded credentials/],
    ['ftp://example.com/a.png', /Expected http or https scheme but received ftp:/],
    ['file:///etc/passwd', /Expected http or https scheme but received file:/],
    ['gopher://example.com/', /scheme/],
    ['not a url', /not a valid URL/],
  ])('%s', async (url, reason) => {
    const { result, fetchImpl } = fetchFor(url)
    const err = await caught(result)
    expect(err).toBeInstanceOf(UnsafeUrlError)
    expect((err as UnsafeUrlError).reason).toMatch(reason)
    expect(fetchImpl).not.toHaveBeenCalled()
  })

  it('refuses a host when any one of its answers is private', async () => {
    const mixed = fakeResolver({ 'mixed.example': [PUBLIC_V4, '10.0.0.7', PUBLIC_V6] })
    const fetchImpl = fakeFetch()
    const err = await caught(guard('https://mixed.example/a.png', { resolver: mixed, fetchImpl }))
    expect(err).toBeInstanceOf(UnsafeUrlError)
    expect((err as UnsafeUrlError).reason).toBe('mixed.example resolves to 10.0.0.7, a private address')
    expect(mixed.resolve).toHaveBeenCalledWith('mixed.example')
    expect(fetchImpl).not.toHaveBeenCalled()
  })

  it('refuses a host with no answers, a failing lookup, or an unparseable answer', async () => {
    const failing = { resolve: async () => Promise.reject(new Error('SERVFAIL')) }
    const garbage = fakeResolver({ 'odd.example': ['not-an-ip'] })
    for (const [url, r, reason] of [
      ['https://nowhere.example/', resolver, /has no A or AAAA records/],
      // The resolver's own words stay out of the reason (it reaches the problem's detail).
      ['https://example.com/', failing, /^DNS lookup for example.com failed$/],
      ['https://odd.example/', garbage, /resolves to unparseable not-an-ip/],
    ] as const) {
      const err = await caught(guard(url, { resolver: r }))
      expect(err).toBeInstanceOf(UnsafeUrlError)
      expect((err as UnsafeUrlError).reason).toMatch(reason)
    }
  })

  it('says which URL it refused, like sharp words its errors', async () => {
    const { result } = fetchFor('http://2130706433/x.png')
    await expect(result).rejects.toThrow('Refusing to fetch http://127.0.0.1/x.png: 127.0.0.1 is a loopback address')
  })
})

describe('guardedFetch lets public targets through', () => {
  it.each([
    'https://example.com/a.png',
    'http://8.8.8.8/a.png',
    'http://[2606:4700:4700::1111]/a.png',
    'http://[::ffff:8.8.8.8]/a.png',
    'http://[64:ff9b::808:808]/a.png',
  ])('%s', async (url) => {
    const { result, fetchImpl } = fetchFor(url)
    const res = await result
    expect(await res.text()).toBe('ok')
    expect(fetchImpl).toHaveBeenCalledTimes(1)
    expect(fetchImpl.mock.calls[0][1]).toMatchObject({ redirect: 'manual' })
  })
})

describe('redirects', () => {
  it('refuses a redirect to a private address without fetching it', async () => {
    const fetchImpl = fakeFetch({ 'https://example.com/a.png': 'http://10.0.0.1/x' })
    const err = await caught(guard('https://example.com/a.png', { fetchImpl }))

    expect(err).toBeInstanceOf(UnsafeUrlError)
    expect((err as UnsafeUrlError).url).toBe('http://10.0.0.1/x')
    expect(calledUrls(fetchImpl)).toEqual(['https://example.com/a.png'])
  })

  it('refuses a redirect to a private name, to credentials or to file:', async () => {
    const r = fakeResolver({ 'example.com': [PUBLIC_V4], 'rebind.example': ['127.0.0.1'] })
    const locations = ['http://rebind.example/', 'http://u:p@example.com/', 'file:///etc/passwd']
    for (const location of locations) {
      const fetchImpl = fakeFetch({ 'https://example.com/a.png': location })
      const result = guard('https://example.com/a.png', { resolver: r, fetchImpl })
      await expect(result).rejects.toBeInstanceOf(UnsafeUrlError)
      expect(calledUrls(fetchImpl)).toEqual(['https://example.com/a.png'])
    }
  })

  it('resolves a relative Location against the current URL', async () => {
    const fetchImpl = fakeFetch({
      'https://example.com/a/b.png': '../c.png',
      'https://example.com/c.png': 'https://cdn.example.net/final.png',
    })
    const res = await guard('https://example.com/a/b.png', { fetchImpl })
    expect(res.status).toBe(200)
    expect(calledUrls(fetchImpl)).toEqual([
      'https://example.com/a/b.png',
      'https://example.com/c.png',
      'https://cdn.example.net/final.png',
    ])
  })

  const chain = (hops: number) =>
    Object.fromEntries(Array.from({ length: hops }, (_, i) => [`https://example.com/${i}`, `/${i + 1}`]))

  it('follows 5 redirects', async () => {
    const fetchImpl = fakeFetch(chain(5))
    const res = await guard('https://example.com/0', { fetchImpl })
    expect(res.status).toBe(200)
    expect(calledUrls(fetchImpl).at(-1)).toBe('https://example.com/5')
  })

  it('refuses the 6th redirect', async () => {
    const fetchImpl = fakeFetch(chain(6))
    const err = await caught(guard('https://example.com/0', { fetchImpl }))

    expect(err).toBeInstanceOf(UnsafeUrlError)
    expect((err as UnsafeUrlError).reason).toBe('more than 5 redirects')
    expect(calledUrls(fetchImpl)).toHaveLength(6)
    expect(calledUrls(fetchImpl)).not.toContain('https://example.com/6')
  })

  it('honours a smaller maxRedirects', async () => {
    const fetchImpl = fakeFetch(chain(2))
    const result = guard('https://example.com/0', { fetchImpl, maxRedirects: 1 })
    await expect(result).rejects.toThrow(/more than 1 redirects/)
  })
})

describe('allow-list (tests and local dev only)', () => {
  const allowlist = ['127.0.0.1:45123', 'localhost']

  it('lets exactly the listed host and port through, without DNS', async () => {
    const r = fakeResolver()
    const fetchImpl = fakeFetch()
    const urls = ['http://127.0.0.1:45123/astronaut.png', 'http://localhost:8787/x']
    for (const url of urls) await guard(url, { resolver: r, allowlist, fetchImpl })
    expect(calledUrls(fetchImpl)).toEqual(urls)
    expect(r.resolve).not.toHaveBeenCalled()
  })

  it.each([
    ['http://127.0.0.1:45124/', /loopback/],
    ['http://127.0.0.1/', /loopback/],
    ['http://127.0.0.2:45123/', /loopback/],
    ['ftp://127.0.0.1:45123/', /scheme/],
    ['http://user:pw@127.0.0.1:45123/', /credentials/],
  ])('still refuses %s', async (url, reason) => {
    const fetchImpl = fakeFetch()
    const result = guardedFetch(url, { resolver, allowlist, fetchImpl })
    await expect(result).rejects.toThrow(reason)
    expect(fetchImpl).not.toHaveBeenCalled()
  })

  it('re-checks a redirect out of an allow-listed host', async () => {
    const fetchImpl = fakeFetch({ 'http://127.0.0.1:45123/r': 'http://192.168.0.1/' })
    await expect(guardedFetch('http://127.0.0.1:45123/r', { resolver, allowlist, fetchImpl })).rejects.toThrow(
      /private address/,
    )
    expect(calledUrls(fetchImpl)).toEqual(['http://127.0.0.1:45123/r'])
  })

  it('is empty in production whatever SSRF_ALLOWLIST says', () => {
    const value = ' 127.0.0.1:45123 , [::1]:8080,'
    expect(allowlistFromEnv({ ENVIRONMENT: 'production', SSRF_ALLOWLIST: value })).toEqual([])
    expect(allowlistFromEnv({ ENVIRONMENT: 'test', SSRF_ALLOWLIST: value })).toEqual(['127.0.0.1:45123', '[::1]:8080'])
  })
})

describe('fetch failures are SourceFetchError, not unsafe_url', () => {
  it('a final 404', async () => {
    const fetchImpl = fakeFetch({ 'https://example.com/missing.png': 404 })
    const err = await caught(guard('https://example.com/missing.png', { fetchImpl }))

    expect(err).toBeInstanceOf(SourceFetchError)
    expect(err).not.toBeInstanceOf(UnsafeUrlError)
    expect((err as SourceFetchError).status).toBe(404)
  })

  it('a network error', async () => {
    const fetchImpl = vi.fn(async () => Promise.reject(new TypeError('Network connection lost.')))
    const result = guard('https://example.com/a.png', { fetchImpl })
    await expect(result).rejects.toThrow(SourceFetchError)
  })

  it('a body over maxBytes, by Content-Length or while streaming', async () => {
    const big = () => new Response(new Uint8Array(2048), { headers: { 'content-length': '2048' } })
    const byLength = fakeFetch({ 'https://example.com/a.png': big() })
    await expect(guard('https://example.com/a.png', { fetchImpl: byLength, maxBytes: 1024 })).rejects.toBeInstanceOf(
      SourceTooLargeError,
    )

    const stream = new ReadableStream({
      pull(c) {
        c.enqueue(new Uint8Array(512))
      },
    })
    const streaming = fakeFetch({ 'https://example.com/a.png': new Response(stream) })
    const res = await guard('https://example.com/a.png', { fetchImpl: streaming, maxBytes: 1024 })
    await expect(res.arrayBuffer()).rejects.toBeInstanceOf(SourceTooLargeError)
  })
})

describe('DohResolver', () => {
  const DOH_URL = 'https://doh.test/dns-query'
  const json = (body: unknown) =>
    new Response(JSON.stringify(body), { headers: { 'content-type': 'application/dns-json' } })

  /** Answers like cloudflare-dns.com: the CNAME chain first, then the addresses of its target. */
  function dohServer(zone: Record<string, { Status?: number; Answer?: unknown[] }>) {
    return vi.fn(async (input: RequestInfo | URL, init?: RequestInit) => {
      const url = new URL(String(input))
      expect(new Headers(init?.headers).get('accept')).toBe('application/dns-json')
      const key = `${url.searchParams.get('name')} ${url.searchParams.get('type')}`
      return json({ Status: 0, ...(zone[key] ?? { Answer: [] }) })
    })
  }
  const zone = {
    'www.example.com A': {
      Answer: [
        { name: 'www.example.com', type: 5, TTL: 300, data: 'cdn.example.net.' },
        { name: 'cdn.example.net', type: 1, TTL: 300, data: PUBLIC_V4 },
        { name: 'cdn.example.net', type: 1, TTL: 300, data: '93.184.215.15' },
      ],
    },
    'www.example.com AAAA': {
      Answer: [
        { name: 'www.example.com', type: 5, TTL: 300, data: 'cdn.example.net.' },
        { name: 'cdn.example.net', type: 28, TTL: 300, data: PUBLIC_V6 },
        { name: 'cdn.example.net', type: 46, TTL: 300, data: 'AAAA 13 3 300 … (RRSIG)' },
      ],
    },
    'alias.example A': { Answer: [{ name: 'alias.example', type: 5, data: 'target.example.' }] },
    'target.example A': { Answer: [{ name: 'target.example', type: 1, data: '10.9.8.7' }] },
    'gone.example A': { Status: 3 },
    'gone.example AAAA': { Status: 3 },
    'broken.example A': { Status: 2 },
  }

  it('returns every A and AAAA address along the CNAME chain, ignoring other types', async () => {
    const fetchImpl = dohServer(zone)
    const doh = new DohResolver({ url: DOH_URL, fetchImpl })
    expect(await doh.resolve('www.example.com')).toEqual([PUBLIC_V4, '93.184.215.15', PUBLIC_V6])
    expect(calledUrls(fetchImpl as never).sort()).toEqual([
      'https://doh.test/dns-query?name=www.example.com&type=A',
      'https://doh.test/dns-query?name=www.example.com&type=AAAA',
    ])
  })

  it('follows a CNAME that came without addresses, and NXDOMAIN is no answers', async () => {
    const doh = new DohResolver({ url: DOH_URL, fetchImpl: dohServer(zone) })
    expect(await doh.resolve('alias.example')).toEqual(['10.9.8.7'])
    expect(await doh.resolve('gone.example')).toEqual([])
    await expect(doh.resolve('broken.example')).rejects.toThrow(/failed \(2\)/)
  })

  it('feeds guardedFetch: a private address behind a CNAME is refused', async () => {
    const doh = new DohResolver({ url: DOH_URL, fetchImpl: dohServer(zone) })
    const fetchImpl = fakeFetch()
    await expect(guard('https://alias.example/a.png', { resolver: doh, fetchImpl })).rejects.toThrow(
      'alias.example resolves to 10.9.8.7, a private address',
    )
    expect(fetchImpl).not.toHaveBeenCalled()
    const res = await guard('https://www.example.com/a.png', { resolver: doh, fetchImpl })
    expect(res.ok).toBe(true)
  })
})

describe('IPv4 parsing of spellings new URL() normalises away', () => {
  it.each([
    ['0x7f.1', '127.0.0.1'],
    ['0177.0.0.1', '127.0.0.1'],
    ['017700000001', '127.0.0.1'],
    ['2130706433', '127.0.0.1'],
    ['127.0.0.1.', '127.0.0.1'],
    ['10.0x10000', '10.1.0.0'],
  ])('%s → %s', (host, ip) => {
    expect(classifyIp(host)?.ip).toBe(ip)
  })

  const notIPv4 = ['1.2.3.4.5', '256.1.1.1', '4294967296', '09.1.1.1', 'example.com']
  it.each(notIPv4)('%s is not IPv4', (host) => {
    expect(parseIPv4(host)).toBeNull()
  })
})
