/**
 * The removal options' defaults are the server's (issue 46 item 5): /openapi.json gives each
 * field its default, and a request that leaves fields out, or sends no options at all, is a
 * removal with those defaults, not a 400. The same request with the defaults written out is the
 * same request to `Idempotency-Key` (its answer is replayed, not refused as a conflict).
 */
import { describe, expect, it } from 'vitest'
import { DEFAULT_REMOVAL_OPTIONS } from '../../src/contract/options'
import { api, fixtureBytes, removal, seedWorkspace, uploadImage } from './helpers'

type Doc = { components: { schemas: Record<string, { properties: Record<string, { default?: unknown }> }> } }

describe('removal options left out take their documented defaults', () => {
  it('the document states every default the server applies', async () => {
    const doc = (await (await api('/openapi.json')).json()) as Doc
    const fields = doc.components.schemas.RemovalOptions.properties
    expect({
      quality: fields.quality.default,
      alpha: fields.alpha.default,
      output: fields.output.default,
    }).toEqual(DEFAULT_REMOVAL_OPTIONS)
  })

  it('{"quality":"balanced"} and no options at all are accepted, and equal the defaults written out', async () => {
    const { key } = await seedWorkspace()
    const upload = await uploadImage(key, await fixtureBytes('astronaut.png'))
    const idempotencyKey = crypto.randomUUID()
    const partial = await removal(key, { uploadId: upload.id, options: { quality: 'balanced' } }, { idempotencyKey })
    expect(partial.status, await partial.clone().text()).toBe(202)
    const job = (await partial.json()) as { id: string }
    const full = await removal(key, { uploadId: upload.id, options: DEFAULT_REMOVAL_OPTIONS }, { idempotencyKey })
    expect([full.status, ((await full.json()) as { id: string }).id]).toEqual([202, job.id])
    const none = await removal(key, { uploadId: upload.id }, { idempotencyKey })
    expect([none.status, ((await none.json()) as { id: string }).id]).toEqual([202, job.id])
    // Raw alpha without its feather: feather 0.
    const raw = await removal(key, { uploadId: upload.id, options: { alpha: { mode: 'raw' } } }, { idempotencyKey })
    expect([raw.status, ((await raw.json()) as { id: string }).id]).toEqual([202, job.id])
  })

  it('a multipart removal without an options part is accepted', async () => {
    const { key } = await seedWorkspace()
    const form = new FormData()
    const photo = new File([await fixtureBytes('astronaut.png')], 'astronaut.png', { type: 'image/png' })
    form.append('image', photo)
    const res = await api('/v1/removals', {
      method: 'POST',
      key,
      body: form,
      headers: { 'idempotency-key': crypto.randomUUID() },
    })
    expect(res.status, await res.clone().text()).toBe(202)
  })

  it('binary alpha still names its threshold', async () => {
    const { key } = await seedWorkspace()
    const upload = await uploadImage(key, await fixtureBytes('astronaut.png'))
    const res = await removal(key, { uploadId: upload.id, options: { alpha: { mode: 'binary' } } })
    expect(res.status).toBe(400)
    expect(((await res.json()) as { field: string }).field).toBe('options.alpha.threshold')
  })
})
