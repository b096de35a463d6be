/**
 * Catalog images through the public API (SPEC.md §4 Catalog images; DESIGN.md §3): the
 * synchronous 201 with its headers, reproducibility by seed, the credit held and settled around
 * the call, reads by the owner only, 24 h retention, and every bad field named.
 */
import { env } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'
import { SCOPES } from '../../src/services/auth'
import { sweepExpiredCatalogImages } from '../../src/services/retention'
import {
  api,
  expectProblem,
  fixtureBytes,
  inferenceStats,
  seedWorkspace,
  setInferenceMode,
  testBudget,
  usage,
} from './helpers'
import { inspect } from './project-helpers'

type Part = [string, Blob | string]

function catalog(key: string, parts: Part[]) {
  const form = new FormData()
  for (const [name, value] of parts) form.append(name, value)
  return api('/v1/catalog-images', { method: 'POST', key, body: form })
}

const png = (bytes: Uint8Array, name = 'ref.png') => new File([bytes], name, { type: 'image/png' })

async function made(res: Response) {
  if (res.status !== 201) throw new Error(`catalog: ${res.status} ${await res.text()}`)
  return { res, bytes: new Uint8Array(await res.arrayBuffer()) }
}

describe('POST /v1/catalog-images', () => {
  it(
    'answers 201 image/png of the asked size with Location, id and seed; the same seed gives the same bytes',
    async () => {
      const { key } = await seedWorkspace()
      const coffee = await fixtureBytes('coffee.png')
      const parts: Part[] = [
        ['references', png(coffee)],
        ['seed', '42'],
        ['width', '800'],
        ['height', '600'],
        ['prompt', 'A mug of coffee ☕ on white'],
      ]
      const first = await made(await catalog(key, parts))
      expect(first.res.headers.get('content-type')).toBe('image/png')
      const id = first.res.headers.get('x-catalog-image-id')!
      expect(id).toMatch(/^[0-9a-f-]{36}$/)
      expect(first.res.headers.get('location')).toBe(`/v1/catalog-images/${id}`)
      expect(first.res.headers.get('x-generation-seed')).toBe('42')
      const report = await inspect(first.bytes)
      expect(report).toMatchObject({ format: 'png', width: 800, height: 600 })
      // Outside the product and its shadow the background is exactly the colour (white by default).
      for (const [x, y, r, g, b] of report.border) expect([x, y, r, g, b]).toEqual([x, y, 255, 255, 255])
      expect(await usage(key)).toMatchObject({ used: 1, held: 0 })

      const again = await made(await catalog(key, parts))
      expect((await inspect(again.bytes)).sha256).toBe(report.sha256)
      const stored = await api(first.res.headers.get('location')!, { key })
      expect(stored.status).toBe(200)
      expect(stored.headers.get('x-generation-seed')).toBe('42')
      expect((await inspect(new Uint8Array(await stored.arrayBuffer()))).sha256).toBe(report.sha256)

      // No seed: a random one, echoed so the image can be made again.
      const random = await made(await catalog(key, [['references', png(coffee)]]))
      expect(random.res.headers.get('x-generation-seed')).toMatch(/^\d+$/)
      expect(await inspect(random.bytes)).toMatchObject({ width: 1024, height: 1024 })
      expect(await usage(key)).toMatchObject({ used: 3, held: 0 })
    },
    testBudget(4),
  )

  it('refuses bad fields with 400 naming them, text as a reference with 415, and charges nothing', async () => {
    const { key } = await seedWorkspace()
    const coffee = png(await fixtureBytes('coffee.png'))
    const cases: [Part[], number, string, string][] = [
      [[], 400, 'invalid_input', 'references'],
      [Array.from({ length: 5 }, (): Part => ['references', coffee]), 400, 'invalid_input', 'references'],
      [
        [
          ['references', coffee],
          ['prompt', 'x'.repeat(4001)],
        ],
        400,
        'invalid_input',
        'prompt',
      ],
      [
        [
          ['references', coffee],
          ['width', '100'],
        ],
        400,
        'invalid_input',
        'width',
      ],
      [
        [
          ['references', coffee],
          ['height', 'tall'],
        ],
        400,
        'invalid_input',
        'height',
      ],
      // DESIGN.md §3: steps 1–100.
      [
        [
          ['references', coffee],
          ['steps', '0'],
        ],
        400,
        'invalid_input',
        'steps',
      ],
      [
        [
          ['references', coffee],
          ['steps', '101'],
        ],
        400,
        'invalid_input',
        'steps',
      ],
      [
        [
          ['references', coffee],
          ['seed', '4294967296'],
        ],
        400,
        'invalid_input',
        'seed',
      ],
      [
        [
          ['references', coffee],
          ['background', 'white'],
        ],
        400,
        'invalid_input',
        'background',
      ],
      [
        [
          ['references', coffee],
          ['shadow', 'dramatic'],
        ],
        400,
        'invalid_input',
        'shadow',
      ],
      [
        [
          ['references', coffee],
          ['layout', 'grid'],
        ],
        400,
        'invalid_input',
        'layout',
      ],
      [
        [
          ['references', coffee],
          ['style', 'vintage'],
        ],
        400,
        'invalid_input',
        'style',
      ],
      [
        [['references', new File(['just some text\n'], 'notes.txt', { type: 'text/plain' })]],
        415,
        'unsupported_media',
        'references.0',
      ],
    ]
    for (const [parts, status, code, field] of cases) {
      await expectProblem(await catalog(key, parts), status, code, field).catch((err) => {
        throw new Error(`${parts.map(([n]) => n).join(',') || 'no parts'}: ${err.message}`)
      })
    }
    expect(await usage(key)).toMatchObject({ used: 0, held: 0 })
  })

  it(
    'takes a 4000-character emoji prompt and four references, asking the inference server once whether it is ready',
    async () => {
      const { key } = await seedWorkspace()
      const coffee = png(await fixtureBytes('coffee.png'))
      const prompt = '🫖'.repeat(4000)
      await setInferenceMode('normal') // resets the proxy's counters
      const res = await catalog(key, [
        ...Array.from({ length: 4 }, (): Part => ['references', coffee]),
        ['prompt', prompt],
        ['layout', 'views'],
        ['seed', '7'],
      ])
      const { bytes } = await made(res)
      expect(await inspect(bytes)).toMatchObject({ width: 1024, height: 1024 })
      // The accept's readiness answer is the one the call goes to (was asked again before the call).
      expect(await inferenceStats()).toMatchObject({ readyChecks: 1 })
    },
    testBudget(5),
  )

  it('decodes every reference before making anything: a truncated back view is 400 references.1, nothing charged', async () => {
    const { key } = await seedWorkspace()
    const coffee = await fixtureBytes('coffee.png')
    const truncated = coffee.subarray(0, Math.floor(coffee.length / 2))
    // hero (the default) draws only the front, views draws both: neither may use a broken reference.
    for (const layout of [[], [['layout', 'views']]] as Part[][]) {
      const res = await catalog(key, [
        ['references', png(coffee)],
        ['references', png(truncated, 'back.png')],
        ...layout,
      ])
      const body = await expectProblem(res, 400, 'invalid_input', 'references.1')
      expect(body.detail).toMatch(/^references\.1: Could not decode image\/png image/)
    }
    expect(await usage(key)).toMatchObject({ used: 0, held: 0 })
  })

  it('releases the credit when no inference server can make it', async () => {
    const { key } = await seedWorkspace()
    await setInferenceMode('down')
    try {
      const res = await catalog(key, [['references', png(await fixtureBytes('coffee.png'))]])
      const body = await expectProblem(res, 503, 'processor_unavailable')
      expect(body.retryable).toBe(true)
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0)
    } finally {
      await setInferenceMode('normal')
    }
    expect(await usage(key)).toMatchObject({ used: 0, held: 0 })
  })
})

describe('Idempotency-Key on POST /v1/catalog-images', () => {
  it(
    'a retry with the same key and input answers the first image and charges once; other input is 409',
    async () => {
      const { key } = await seedWorkspace()
      const parts = async (): Promise<Part[]> => [
        ['references', png(await fixtureBytes('coffee.png'))],
        ['width', '256'],
        ['height', '256'],
      ]
      const send = async (p: Part[], idempotencyKey: string) => {
        const form = new FormData()
        for (const [name, value] of p) form.append(name, value)
        return api('/v1/catalog-images', {
          method: 'POST',
          key,
          body: form,
          headers: { 'idempotency-key': idempotencyKey },
        })
      }
      const first = await made(await send(await parts(), 'catalog-1'))
      const again = await made(await send(await parts(), 'catalog-1'))
      for (const header of ['x-catalog-image-id', 'x-generation-seed', 'location']) {
        expect(again.res.headers.get(header)).toBe(first.res.headers.get(header))
      }
      expect(again.bytes).toEqual(first.bytes)
      expect(await usage(key)).toMatchObject({ used: 1, held: 0 })

      const other = await send([...(await parts()), ['seed', '7']], 'catalog-1')
      await expectProblem(other, 409, 'idempotency_conflict', 'Idempotency-Key')
      // Without a key every request makes (and charges) an image, as before.
      const plain = await made(await catalog(key, await parts()))
      expect(plain.res.headers.get('x-catalog-image-id')).not.toBe(first.res.headers.get('x-catalog-image-id'))
      expect(await usage(key)).toMatchObject({ used: 2, held: 0 })
    },
    testBudget(2),
  )
})

describe('GET /v1/catalog-images/{id}', () => {
  it('is for the owning workspace with jobs:read, and 410 after 24 h', async () => {
    const { key } = await seedWorkspace()
    const res = await made(await catalog(key, [['references', png(await fixtureBytes('coffee.png'))]]))
    const location = res.res.headers.get('location')!
    const id = res.res.headers.get('x-catalog-image-id')!

    const stranger = await seedWorkspace()
    await expectProblem(await api(location, { key: stranger.key }), 404, 'catalog_image_not_found')
    const writer = await seedWorkspace({ scopes: SCOPES.filter((s) => s !== 'jobs:read') })
    await expectProblem(await api(location, { key: writer.key }), 403, 'insufficient_scope')
    const reader = await seedWorkspace({ scopes: ['jobs:read'] })
    await expectProblem(
      await catalog(reader.key, [['references', png(await fixtureBytes('coffee.png'))]]),
      403,
      'insufficient_scope',
    )

    await env.DB.prepare('UPDATE catalog_images SET expires_at = ? WHERE id = ?')
      .bind(new Date(0).toISOString(), id)
      .run()
    expect(await sweepExpiredCatalogImages(env)).toBeGreaterThanOrEqual(1)
    await expectProblem(await api(location, { key }), 410, 'asset_expired')
    expect(await env.BUCKET.head(`catalog/${id}.png`)).toBeNull()
    // Its record stays listed, marked expired, as a job's metadata stays.
    const listed = (await (await api('/v1/catalog-images', { key })).json()) as CatalogImageList
    expect(listed.catalogImages).toEqual([expect.objectContaining({ id, expired: true })])
  })
})

interface CatalogImageList {
  catalogImages: { id: string; expired: boolean }[]
  nextCursor: string | null
}

describe('GET /v1/catalog-images', () => {
  it("lists the workspace's images newest first with what they were made with, a page at a time; no one else's", async () => {
    const { key } = await seedWorkspace()
    const coffee = png(await fixtureBytes('coffee.png'))
    const ids: string[] = []
    for (const seed of ['1', '2']) {
      const parts: Part[] = [
        ['references', coffee],
        ['references', coffee],
        ['seed', seed],
        ['width', '256'],
      ]
      const res = await made(
        await catalog(key, [...parts, ['height', '256'], ['prompt', 'mug ☕'], ['shadow', 'hard']]),
      )
      ids.push(res.res.headers.get('x-catalog-image-id')!)
    }
    const list = async (query: string, asKey = key) => {
      const res = await api(`/v1/catalog-images${query}`, { key: asKey })
      expect(res.status).toBe(200)
      return (await res.json()) as CatalogImageList
    }

    const first = await list('?limit=1')
    expect(first.catalogImages).toEqual([
      {
        id: ids[1],
        seed: 2,
        width: 256,
        height: 256,
        references: 2,
        layout: 'hero',
        shadow: 'hard',
        background: '#FFFFFF',
        prompt: 'mug ☕',
        createdAt: expect.any(String),
        expiresAt: expect.any(String),
        expired: false,
        links: { self: `/v1/catalog-images/${ids[1]}` },
      },
    ])
    const second = await list(`?limit=1&cursor=${first.nextCursor}`)
    expect(second.catalogImages.map((i) => i.id)).toEqual([ids[0]])
    expect(second.nextCursor).toBeNull()
    expect((await list('')).catalogImages.map((i) => i.id)).toEqual([ids[1], ids[0]])

    expect((await list('', (await seedWorkspace()).key)).catalogImages).toEqual([])
    const writer = await seedWorkspace({ scopes: SCOPES.filter((s) => s !== 'jobs:read') })
    await expectProblem(await api('/v1/catalog-images', { key: writer.key }), 403, 'insufficient_scope')
    const bad = await api('/v1/catalog-images?cursor=not-a-cursor', { key })
    await expectProblem(bad, 400, 'invalid_input', 'cursor')
  })
})

describe('a call whose Worker died', () => {
  it('has its hold released and its row failed by the sweep', async () => {
    const { key, workspaceId } = await seedWorkspace()
    const { holdStatements } = await import('../../src/services/credits')
    const { settleAbandonedCatalogImages } = await import('../../src/services/catalog')
    const id = crypto.randomUUID()
    // What an accepted call leaves behind when its Worker dies before the answer.
    await env.DB.batch([
      ...holdStatements(env.DB, workspaceId, [id]),
      env.DB.prepare(
        `INSERT INTO catalog_images (id, workspace_id, status, options, "references", created_at) VALUES (?, ?, 'pending', '{}', 1, ?)`,
      ).bind(id, workspaceId, new Date().toISOString()),
    ])
    expect(await usage(key)).toMatchObject({ held: 1 })
    expect(await settleAbandonedCatalogImages(env)).toBe(0) // still within its deadline
    expect(await settleAbandonedCatalogImages(env, Date.now() + 16 * 60_000)).toBeGreaterThanOrEqual(1)
    expect(await usage(key)).toMatchObject({ held: 0, used: 0 })
    const row = await env.DB.prepare('SELECT status FROM catalog_images WHERE id = ?')
      .bind(id)
      .first<{ status: string }>()
    expect(row?.status).toBe('failed')
    // Settling twice changes nothing.
    await settleAbandonedCatalogImages(env, Date.now() + 16 * 60_000)
    expect(await usage(key)).toMatchObject({ held: 0, used: 0 })
  })
})
