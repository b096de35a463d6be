import { describe, expect, it } from 'vitest'
import { env } from 'cloudflare:test'
import { api, BINARY_MASK, expectProblem, fixtureBytes, RAW_CUTOUT, removal, seedWorkspace, usage } from './helpers'

const someUpload = crypto.randomUUID()

describe('removal options are strict (400 invalid_input)', () => {
  it('rejects an unknown option field', async () => {
    const { key } = await seedWorkspace()
    const res = await removal(key, { uploadId: someUpload, options: { ...RAW_CUTOUT, sharpen: true } })
    const problem = await expectProblem(res, 400, 'invalid_input', 'options.sharpen')
    // Worded as the inference server words it (src/contract/validation.ts).
    expect(problem.detail).toBe('Unknown field options.sharpen: options are strict')
  })

  it('rejects threshold with raw alpha', async () => {
    const { key } = await seedWorkspace()
    const options = { ...RAW_CUTOUT, alpha: { mode: 'raw', feather: 0, threshold: 0.5 } }
    const problem = await expectProblem(
      await removal(key, { uploadId: someUpload, options }),
      400,
      'invalid_input',
      'options.alpha.threshold',
    )
    expect(problem.detail).toBe('Unknown field options.alpha.threshold: options are strict')
  })

  it('names a field without a name as `""`', async () => {
    const { key } = await seedWorkspace()
    const res = await removal(key, { uploadId: someUpload, options: { ...RAW_CUTOUT, '': 1 } })
    const problem = await expectProblem(res, 400, 'invalid_input', 'options.""')
    expect(problem.detail).toBe('Unknown field options."": options are strict')
  })

  it('requires threshold with binary alpha', async () => {
    const { key } = await seedWorkspace()
    const options = { ...BINARY_MASK, alpha: { mode: 'binary', feather: 0 } }
    await expectProblem(
      await removal(key, { uploadId: someUpload, options }),
      400,
      'invalid_input',
      'options.alpha.threshold',
    )
  })

  it('rejects the legacy format and recipe fields', async () => {
    const { key } = await seedWorkspace()
    for (const legacy of [{ format: 'png' }, { recipe: { version: 1 } }]) {
      const res = await removal(key, { uploadId: someUpload, options: { ...RAW_CUTOUT, ...legacy } })
      await expectProblem(res, 400, 'invalid_input', `options.${Object.keys(legacy)[0]}`)
    }
  })

  it('rejects wrong types and out-of-range numbers', async () => {
    const { key } = await seedWorkspace()
    const cases: [unknown, string][] = [
      [{ ...RAW_CUTOUT, quality: 'ultra' }, 'options.quality'],
      [{ ...RAW_CUTOUT, alpha: { mode: 'raw', feather: 5 } }, 'options.alpha.feather'],
      [{ ...BINARY_MASK, alpha: { mode: 'binary', threshold: 1.5, feather: 0 } }, 'options.alpha.threshold'],
      [{ ...RAW_CUTOUT, output: 'jpeg' }, 'options.output'],
      [{ ...RAW_CUTOUT, alpha: { mode: 'raw', feather: '1' } }, 'options.alpha.feather'],
    ]
    for (const [options, field] of cases) {
      await expectProblem(await removal(key, { uploadId: someUpload, options }), 400, 'invalid_input', field)
    }
  })

  it('requires exactly one of sourceUrl or uploadId', async () => {
    const { key } = await seedWorkspace()
    await expectProblem(await removal(key, { options: RAW_CUTOUT }), 400, 'invalid_input')
    const both = { uploadId: someUpload, sourceUrl: 'https://example.com/a.png', options: RAW_CUTOUT }
    await expectProblem(await removal(key, both), 400, 'invalid_input')
  })

  it('rejects unknown top-level fields and malformed JSON', async () => {
    const { key } = await seedWorkspace()
    await expectProblem(
      await removal(key, { uploadId: someUpload, options: RAW_CUTOUT, extra: 1 }),
      400,
      'invalid_input',
      'extra',
    )
    const res = await api('/v1/removals', {
      method: 'POST',
      key,
      body: '{"uploadId":',
      headers: { 'content-type': 'application/json', 'idempotency-key': 'k1' },
    })
    await expectProblem(res, 400, 'invalid_input')
  })

  it('requires an Idempotency-Key of at most 128 characters', async () => {
    const { key } = await seedWorkspace()
    const res = await api('/v1/removals', { method: 'POST', key, json: { uploadId: someUpload, options: RAW_CUTOUT } })
    await expectProblem(res, 400, 'invalid_input', 'Idempotency-Key')
    // One spelling of the header in `field`, whichever check refused it (SPEC.md §7 `field`).
    const long = await removal(key, { uploadId: someUpload, options: RAW_CUTOUT }, { idempotencyKey: 'k'.repeat(129) })
    const tooLong = await expectProblem(long, 400, 'invalid_input', 'Idempotency-Key')
    expect(tooLong.detail).toBe('Too big: expected string to have <=128 characters for Idempotency-Key')
    const batch = await api('/v1/batches', {
      method: 'POST',
      key,
      json: { uploadIds: [someUpload], options: RAW_CUTOUT },
      headers: { 'idempotency-key': 'k'.repeat(129) },
    })
    await expectProblem(batch, 400, 'invalid_input', 'Idempotency-Key')
    const missing = await api('/v1/batches', {
      method: 'POST',
      key,
      json: { uploadIds: [someUpload], options: RAW_CUTOUT },
    })
    await expectProblem(missing, 400, 'invalid_input', 'Idempotency-Key')
  })

  it('validates multipart options with the same strict schema', async () => {
    const { key } = await seedWorkspace()
    const form = new FormData()
    form.set('image', new File([new Uint8Array(64)], 'a.png', { type: 'image/png' }))
    form.set('options', JSON.stringify({ ...RAW_CUTOUT, format: 'png' }))
    const res = await api('/v1/removals', { method: 'POST', key, body: form, headers: { 'idempotency-key': 'm1' } })
    await expectProblem(res, 400, 'invalid_input', 'options.format')
  })

  it('refuses a multipart part it does not list with 400 naming it, and holds nothing', async () => {
    const { key } = await seedWorkspace()
    const form = new FormData()
    form.set('image', new File([await fixtureBytes('astronaut.png')], 'a.png', { type: 'image/png' }))
    form.set('options', JSON.stringify(RAW_CUTOUT))
    form.set('format', 'webp')
    const res = await api('/v1/removals', { method: 'POST', key, body: form, headers: { 'idempotency-key': 'm2' } })
    const problem = await expectProblem(res, 400, 'invalid_input', 'format')
    expect(problem.detail).toBe('Unknown multipart part format: only the parts this operation lists are accepted')
    expect(await usage(key)).toMatchObject({ held: 0, used: 0 })
    expect((await api('/v1/jobs', { key }).then((r) => r.json())) as { jobs: unknown[] }).toMatchObject({ jobs: [] })
  })

  it('refuses an unsupported body type with 415', async () => {
    const { key } = await seedWorkspace()
    const res = await api('/v1/removals', {
      method: 'POST',
      key,
      body: 'uploadId=1',
      headers: { 'content-type': 'text/plain', 'idempotency-key': 'x' },
    })
    await expectProblem(res, 415, 'unsupported_media')
  })
})

describe('authentication and scopes', () => {
  it('401 for a missing, unknown, expired or revoked key', async () => {
    await expectProblem(await api('/v1/jobs'), 401, 'invalid_api_key')
    await expectProblem(await api('/v1/jobs', { key: 'sk_live_nope' }), 401, 'invalid_api_key')
    const expired = await seedWorkspace({ expiresAt: new Date(Date.now() - 1000).toISOString() })
    await expectProblem(await api('/v1/jobs', { key: expired.key }), 401, 'invalid_api_key')
    const revoked = await seedWorkspace()
    expect((await api('/v1/jobs', { key: revoked.key })).status).toBe(200)
    await env.DB.prepare('UPDATE api_keys SET revoked_at = ? WHERE workspace_id = ?')
      .bind(new Date().toISOString(), revoked.workspaceId)
      .run()
    await expectProblem(await api('/v1/jobs', { key: revoked.key }), 401, 'invalid_api_key')
  })

  it('403 when the key lacks the scope', async () => {
    const readOnly = await seedWorkspace({ scopes: ['jobs:read'] })
    await expectProblem(
      await removal(readOnly.key, { uploadId: someUpload, options: RAW_CUTOUT }),
      403,
      'insufficient_scope',
    )
    await expectProblem(await api('/v1/uploads', { method: 'POST', key: readOnly.key }), 403, 'insufficient_scope')
    const writeOnly = await seedWorkspace({ scopes: ['images:write'] })
    await expectProblem(await api('/v1/jobs', { key: writeOnly.key }), 403, 'insufficient_scope')
  })

  it('every response carries X-Request-Id', async () => {
    for (const res of [await api('/health/live'), await api('/v1/jobs'), await api('/openapi.json')]) {
      expect(res.headers.get('x-request-id')).toMatch(/^req_/)
    }
  })
})
