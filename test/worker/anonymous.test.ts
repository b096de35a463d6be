import { describe, expect, it } from 'vitest'
import { env } from 'cloudflare:test'
import { sniffImage } from '../../src/lib/image-sniff'
import { api, expectProblem, fixtureBytes, RAW_CUTOUT, seedWorkspace, settled } from './helpers'

const freshIp = () => `198.51.100.${1 + Math.floor(Math.random() * 250)}`

function deviceCookieOf(res: Response): string {
  const cookie = res.headers.get('set-cookie') ?? ''
  const match = cookie.match(/__Host-device=([^;]+)/)
  if (!match) throw new Error(`no device cookie in ${cookie}`)
  return `__Host-device=${match[1]}`
}

/** A removal that is accepted (it spends allowance) and fails fast: the PNG is cut short. */
async function cheapRemoval(ip: string, cookie?: string) {
  const bytes = (await fixtureBytes('astronaut.png')).subarray(0, 4096)
  const form = new FormData()
  form.set('image', new File([bytes], 'cut.png'))
  form.set('options', JSON.stringify(RAW_CUTOUT))
  const headers: Record<string, string> = { 'idempotency-key': crypto.randomUUID(), 'cf-connecting-ip': ip }
  if (cookie) headers.cookie = cookie
  return api('/v1/removals', { method: 'POST', body: form, headers })
}

describe('anonymous removals', () => {
  it('work without a key, set the device cookie, and cap a 12 MP result at 0.25 MP', async () => {
    const ip = freshIp()
    const res = await api('/v1/removals', {
      method: 'POST',
      json: { sourceUrl: `${env.FIXTURE_ORIGIN}/generated/photo-12mp.jpg`, options: RAW_CUTOUT },
      headers: { 'idempotency-key': crypto.randomUUID(), prefer: 'wait=8', 'cf-connecting-ip': ip },
    })
    const setCookie = res.headers.get('set-cookie')!
    expect(setCookie).toMatch(/^__Host-device=[^;]+; Max-Age=31536000; Path=\/; Secure; HttpOnly; SameSite=Lax$/)
    const cookie = deviceCookieOf(res)
    const job = await settled(res, { headers: { cookie, 'cf-connecting-ip': ip } })
    expect(job.status).toBe('succeeded')
    const png = new Uint8Array(
      await (await api(job.result!.url, { headers: { 'cf-connecting-ip': ip } })).arrayBuffer(),
    )
    const { width, height } = sniffImage(png)!
    expect(width! * height!).toBeLessThanOrEqual(250_000)
    expect(width! * height!).toBeGreaterThan(200_000)

    // The device can read its own job; another device is told it needs a credential; history needs sign-in.
    expect((await api(`/v1/jobs/${job.id}`, { headers: { cookie, 'cf-connecting-ip': ip } })).status).toBe(200)
    await expectProblem(
      await api(`/v1/jobs/${job.id}`, { headers: { 'cf-connecting-ip': ip } }),
      401,
      'invalid_api_key',
    )
    await expectProblem(await api('/v1/jobs', { headers: { cookie } }), 401, 'invalid_api_key')
    const signedIn = await seedWorkspace()
    await expectProblem(await api(`/v1/jobs/${job.id}`, { key: signedIn.key }), 404, 'job_not_found')
  })

  it('allow 7 per UTC day per device and per IP: the 8th is 429, a forged cookie gets nothing new', async () => {
    const ip = freshIp()
    const first = await cheapRemoval(ip)
    expect(first.status).toBe(202)
    const cookie = deviceCookieOf(first)
    for (let i = 2; i <= 7; i++) expect((await cheapRemoval(ip, cookie)).status).toBe(202)
    const usage = (await (await api('/v1/usage', { headers: { cookie, 'cf-connecting-ip': ip } })).json()) as Record<
      string,
      unknown
    >
    expect(usage).toMatchObject({ kind: 'anonymous', limit: 7, remaining: 0 })
    expect(new Date(usage.periodEndsAt as string).toISOString().slice(11)).toBe('00:00:00.000Z')

    const eighth = await cheapRemoval(ip, cookie)
    const body = await expectProblem(eighth, 429, 'rate_limit_exceeded')
    expect(body.retryable).toBe(true)
    expect(Number(eighth.headers.get('retry-after'))).toBeGreaterThan(0)
    // A tampered cookie is a new device, but the address has nothing left.
    const tampered = cookie.slice(0, -4) + (cookie.endsWith('AAAA') ? 'BBBB' : 'AAAA')
    const forged = await cheapRemoval(ip, tampered)
    await expectProblem(forged, 429, 'rate_limit_exceeded')
    expect(forged.headers.get('set-cookie')).toMatch(/^__Host-device=/)
    // The same device from another address has nothing left either.
    await expectProblem(await cheapRemoval(freshIp(), cookie), 429, 'rate_limit_exceeded')
    // Forgetting the device clears the cookie but not the allowance.
    const forget = await api('/v1/device', { method: 'DELETE', headers: { cookie, 'cf-connecting-ip': ip } })
    expect(forget.status).toBe(204)
    expect(forget.headers.get('set-cookie')).toMatch(/^__Host-device=; Max-Age=0/)
    await expectProblem(await cheapRemoval(ip), 429, 'rate_limit_exceeded')
  })

  it('refuses batches, keys, webhooks and uploads without sign-in', async () => {
    for (const [method, path] of [
      ['POST', '/v1/batches'],
      ['GET', '/v1/api-keys'],
      ['GET', '/v1/webhooks'],
      ['POST', '/v1/uploads'],
    ]) {
      await expectProblem(
        await api(path, { method, headers: { 'cf-connecting-ip': freshIp() } }),
        401,
        'invalid_api_key',
      )
    }
  })
})
