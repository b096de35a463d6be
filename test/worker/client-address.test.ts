/**
 * The per-IP anonymous allowance takes the address only from where the platform puts it. Under
 * `wrangler dev` (ENVIRONMENT=development) miniflare passes a client's own `CF-Connecting-IP`
 * through, so there a forged header must not buy a fresh allowance. The Worker's own fetch handler
 * is called with the local-mode environment, as `npm start` runs it.
 */
import { createExecutionContext, env, waitOnExecutionContext } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'
import worker from '../../src/index'
import { BASE, expectProblem, fixtureBytes, RAW_CUTOUT } from './helpers'

const localEnv = { ...env, ENVIRONMENT: 'development' }
let forged = 0
const forgedIp = () => `192.0.2.${++forged}`

async function localFetch(path: string, init: RequestInit): Promise<Response> {
  const ctx = createExecutionContext()
  const res = await worker.fetch(new Request(new URL(path, BASE), init), localEnv as typeof env, ctx)
  await waitOnExecutionContext(ctx)
  return res
}

/** An anonymous removal from a new device (no cookie) claiming a new address; it fails fast (cut-short PNG). */
async function removalFromNowhere(): Promise<Response> {
  const form = new FormData()
  form.set('image', new File([(await fixtureBytes('astronaut.png')).subarray(0, 4096)], 'cut.png'))
  form.set('options', JSON.stringify(RAW_CUTOUT))
  return localFetch('/v1/removals', {
    method: 'POST',
    body: form,
    headers: { 'idempotency-key': crypto.randomUUID(), 'cf-connecting-ip': forgedIp() },
  })
}

describe('client address in local mode', () => {
  it('a forged CF-Connecting-IP (and a fresh device) does not reset the anonymous allowance', async () => {
    const before = await localFetch('/v1/usage', { headers: { 'cf-connecting-ip': forgedIp() } })
    const { remaining, limit } = (await before.json()) as { remaining: number; limit: number }
    expect(limit).toBe(7)
    expect(remaining).toBeGreaterThan(0)
    for (let i = 0; i < remaining; i++) {
      const res = await removalFromNowhere()
      expect(res.status).toBe(202)
      expect(res.headers.get('set-cookie')).toMatch(/^__Host-device=/)
    }
    // Every request came from a new device and claimed a new address: the machine's one allowance is spent.
    const refused = await removalFromNowhere()
    const problem = await expectProblem(refused, 429, 'rate_limit_exceeded')
    expect(problem.detail).toBe(
      'Anonymous use allows 7 removals per UTC day; sign in for more, or retry after the reset',
    )
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0)
    const after = await localFetch('/v1/usage', { headers: { 'cf-connecting-ip': forgedIp() } })
    expect(await after.json()).toMatchObject({ kind: 'anonymous', remaining: 0 })
  })
})
