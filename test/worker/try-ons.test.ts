/**
 * Virtual try-on through the public API (SPEC.md §4 POST /v1/virtual-try-ons; DESIGN.md §3
 * Virtual try-on): a job like a removal with two images, scopes `tryon:write` and `jobs:read`,
 * strict JSON and multipart bodies, and failures that name the image at fault.
 */
import { env } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'
import { SCOPES } from '../../src/services/auth'
import { api, expectProblem, fixtureBytes, seedWorkspace, settled, testBudget, uploadImage, usage } from './helpers'
import { download, inspect } from './project-helpers'

const OPTIONS = { category: 'upper_body', seed: 7 }

function tryOn(key: string | undefined, body: unknown, opts: { idempotencyKey?: string; wait?: number } = {}) {
  const headers: Record<string, string> = { 'idempotency-key': opts.idempotencyKey ?? crypto.randomUUID() }
  if (opts.wait !== undefined) headers.prefer = `wait=${opts.wait}`
  const init = body instanceof FormData ? { body } : { json: body }
  return api('/v1/virtual-try-ons', { method: 'POST', key, headers, ...init })
}

function form(parts: Record<string, Blob | string>) {
  const data = new FormData()
  for (const [name, value] of Object.entries(parts)) data.append(name, value)
  return data
}

const png = (bytes: Uint8Array, name: string) => new File([bytes], name, { type: 'image/png' })

describe('POST /v1/virtual-try-ons', () => {
  it(
    'dresses the astronaut in a made shirt: a job like a removal, the person photo’s size, one credit',
    async () => {
      const { key } = await seedWorkspace()
      const person = await uploadImage(key, await fixtureBytes('astronaut.png'))
      const garment = await uploadImage(key, await fixtureBytes('garment-shirt.png'))
      const body = { person: { uploadId: person.id }, garment: { uploadId: garment.id }, options: OPTIONS }
      const job = await settled(await tryOn(key, body, { wait: 8 }), { key })
      expect(job).toMatchObject({ kind: 'virtual_try_on', status: 'succeeded', error: null })
      expect((job.warnings as { code: string }[]).map((w) => w.code)).toContain('experimental_non_commercial')
      const result = await inspect(await download(undefined, job.result!.url))
      expect(result).toMatchObject({ format: 'png', width: 512, height: 512 })
      expect(await usage(key)).toMatchObject({ used: 1, held: 0 })

      // The same inputs and seed give the same bytes.
      const again = await settled(await tryOn(key, body, { wait: 8 }), { key })
      expect((await inspect(await download(undefined, again.result!.url))).sha256).toBe(result.sha256)
    },
    testBudget(4),
  )

  it(
    'a photo with no person ends failed with invalid_input naming the person image, and releases the credit',
    async () => {
      const { key } = await seedWorkspace()
      const res = await tryOn(
        key,
        form({
          person: png(await fixtureBytes('coffee.png'), 'coffee.png'),
          garment: png(await fixtureBytes('garment-shirt.png'), 'shirt.png'),
          // No seed: one is chosen at accept and kept with the job, so the same request can be made again.
          options: JSON.stringify({ category: 'upper_body' }),
        }),
        { wait: 8 },
      )
      const job = await settled(res, { key })
      // Each image is the job's own object, named after its part (one image would be `sources/<id>`).
      const stored = await env.BUCKET.list({ prefix: `sources/${job.id}` })
      expect(stored.objects.map((o) => o.key).sort()).toEqual([`sources/${job.id}/garment`, `sources/${job.id}/person`])
      // The person is the job's own source; the garment is recorded with it (the retention sweep asks about both).
      const row = await env.DB.prepare('SELECT source_key, options FROM jobs WHERE id = ?').bind(job.id).first<{
        source_key: string
        options: string
      }>()
      expect(row?.source_key).toBe(`sources/${job.id}/person`)
      expect(JSON.parse(row?.options ?? '{}')).toMatchObject({ category: 'upper_body', seed: expect.any(Number) })
      const sources = await env.DB.prepare('SELECT source_key FROM job_sources WHERE job_id = ? ORDER BY source_key')
        .bind(job.id)
        .all<{ source_key: string }>()
      expect(sources.results.map((r) => r.source_key)).toEqual([
        `sources/${job.id}/garment`,
        `sources/${job.id}/person`,
      ])
      expect(job.status).toBe('failed')
      expect(job.error?.code).toBe('invalid_input')
      expect(job.error?.message).toMatch(/person/)
      expect(await usage(key)).toMatchObject({ used: 0, held: 0 })
    },
    testBudget(2),
  )

  it('refuses bad bodies with 400 naming the field, and wrong credentials with 401/403', async () => {
    const { key } = await seedWorkspace()
    const astronaut = png(await fixtureBytes('astronaut.png'), 'astronaut.png')
    const upload = { uploadId: crypto.randomUUID() }
    const cases: [unknown, string][] = [
      [form({ person: astronaut, garment: astronaut, options: JSON.stringify(OPTIONS), note: 'hi' }), 'note'],
      [form({ person: astronaut, options: JSON.stringify(OPTIONS) }), 'garment'],
      [form({ person: astronaut, garment: astronaut, options: '{"category":"hat"}' }), 'options.category'],
      [form({ person: astronaut, garment: astronaut, options: '{"category":"dress","size":"M"}' }), 'options.size'],
      [{ person: upload, garment: upload, options: { category: 'upper_body', seed: -1 } }, 'options.seed'],
      [
        { person: { ...upload, sourceUrl: 'https://example.com/a.png' }, garment: upload, options: OPTIONS },
        'person.uploadId',
      ],
      [{ person: upload, garment: {}, options: OPTIONS }, 'garment.sourceUrl'],
      [{ person: upload, garment: upload }, 'options'],
      [{ person: upload, garment: upload, options: OPTIONS, priority: 'high' }, 'priority'],
    ]
    for (const [body, field] of cases) {
      await expectProblem(await tryOn(key, body), 400, 'invalid_input', field).catch((err) => {
        throw new Error(`${field}: ${err.message}`)
      })
    }
    // An upload that is not this workspace's is bad input, naming the member.
    await expectProblem(
      await tryOn(key, { person: upload, garment: upload, options: OPTIONS }),
      400,
      'invalid_input',
      'person.uploadId',
    )
    await expectProblem(
      await api('/v1/virtual-try-ons', { method: 'POST', json: { person: upload, garment: upload, options: OPTIONS } }),
      401,
      'invalid_api_key',
    )
    for (const missing of ['tryon:write', 'jobs:read'] as const) {
      const limited = await seedWorkspace({ scopes: SCOPES.filter((s) => s !== missing) })
      await expectProblem(
        await tryOn(limited.key, { person: upload, garment: upload, options: OPTIONS }),
        403,
        'insufficient_scope',
      )
    }
    expect(await usage(key)).toMatchObject({ used: 0, held: 0 })
  })
})
