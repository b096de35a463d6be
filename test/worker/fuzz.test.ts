/**
 * Fuzzing through the public API (fast-check): removal options, recipes, strokes, refinement
 * points and boxes, and multipart bodies. Every input gets a 2xx or a problem+json 4xx, never a
 * 5xx. Runs are sized to finish in tens of seconds; a failure prints the seed and the shrunk input
 * (rerun one with `fc.assert(…, { seed, path })`).
 *
 * Inputs are built so that none costs a model run: removals name an upload that does not exist
 * (valid options then end in 400 `uploadId`), multipart images are random bytes, and refinements
 * name a base that is not the newest (a valid body then ends in 409). Revisions are the exception:
 * a valid one is rasterised by the inference server for real, which is what is under test.
 */
import fc from 'fast-check'
import { beforeAll, describe, expect, it } from 'vitest'
import { api, seedWorkspace, testBudget } from './helpers'
import { createProject, succeededRemoval } from './project-helpers'

const RUNS = 60

/** 2xx, or a 4xx problem+json whose body agrees with its status. Never a 5xx. */
async function expectHandled(res: Response, what: unknown): Promise<void> {
  const text = await res.text()
  const context = `${res.status} ${text.slice(0, 300)} for ${JSON.stringify(what)?.slice(0, 300)}`
  expect(res.status, context).toBeLessThan(500)
  if (res.status < 400) return
  expect(res.headers.get('content-type'), context).toBe('application/problem+json')
  const problem = JSON.parse(text) as { status: number; code: string; detail: string; requestId: string }
  expect(problem.status, context).toBe(res.status)
  expect(typeof problem.code === 'string' && typeof problem.detail === 'string', context).toBe(true)
  expect(problem.requestId, context).toMatch(/^req_/)
}

/** A value that is sometimes right for a field and often wrong in every way JSON allows. */
const maybe = <T>(good: fc.Arbitrary<T>) =>
  fc.oneof(
    { weight: 3, arbitrary: good },
    fc.double(),
    fc.integer(),
    fc.string({ maxLength: 12 }),
    fc.boolean(),
    fc.constant(null),
    fc.array(fc.integer(), { maxLength: 3 }),
    fc.dictionary(fc.string({ maxLength: 6 }), fc.integer(), { maxKeys: 2 }),
  )

/** A record of `fields` (each may be missing), sometimes with an unknown key, sometimes anything. */
const objectOf = (fields: Record<string, fc.Arbitrary<unknown>>) =>
  fc.oneof(
    { weight: 6, arbitrary: fc.record(fields, { requiredKeys: [] }) },
    fc
      .tuple(fc.record(fields, { requiredKeys: [] }), fc.string({ minLength: 1, maxLength: 8 }), fc.jsonValue())
      .map(([o, k, v]) => ({ ...o, [k]: v })),
    fc.jsonValue(),
  )

const unit = fc.double({ min: -0.5, max: 1.5, noNaN: true })

const removalOptions = objectOf({
  quality: maybe(fc.constantFrom('fast', 'balanced', 'high')),
  alpha: objectOf({
    mode: maybe(fc.constantFrom('raw', 'binary')),
    threshold: maybe(unit),
    feather: maybe(fc.double({ min: -1, max: 5, noNaN: true })),
  }),
  output: maybe(fc.constantFrom('mask', 'cutout')),
  format: fc.constantFrom('png', 'webp'),
})

const recipe = objectOf({
  version: maybe(fc.constant(1)),
  background: objectOf({
    type: maybe(fc.constantFrom('transparent', 'color')),
    color: maybe(fc.stringMatching(/^#[0-9A-Fa-f]{6,8}$/)),
  }),
  crop: maybe(fc.boolean()),
  margin: maybe(fc.double({ min: -10, max: 6000, noNaN: true })),
  width: maybe(fc.integer({ min: -5, max: 12_000 })),
  height: maybe(fc.integer({ min: -5, max: 12_000 })),
})

const point = fc.oneof({ weight: 4, arbitrary: fc.tuple(unit, unit) }, fc.jsonValue())
const stroke = objectOf({
  tool: maybe(fc.constantFrom('restore', 'erase')),
  points: maybe(fc.array(point, { maxLength: 8 })),
  size: maybe(fc.double({ min: -0.1, max: 1.2, noNaN: true })),
  hardness: maybe(unit),
  opacity: maybe(unit),
})

// Well-formed edits, so that the valid path (a real rasterisation) is fuzzed too.
const inUnit = fc.double({ min: 0, max: 1, noNaN: true })
const goodStroke = fc.record(
  {
    tool: fc.constantFrom('restore', 'erase'),
    points: fc.array(fc.tuple(inUnit, inUnit), { minLength: 1, maxLength: 8 }),
    size: fc.double({ min: 1e-6, max: 1, noNaN: true }),
    hardness: inUnit,
    opacity: inUnit,
  },
  { requiredKeys: ['tool', 'points', 'size'] },
)
const goodRecipe = fc.record(
  {
    version: fc.constant(1),
    background: fc.oneof(
      fc.constant({ type: 'transparent' }),
      fc.stringMatching(/^#[0-9A-F]{6}$/).map((color) => ({ type: 'color', color })),
    ),
    crop: fc.boolean(),
    margin: fc.double({ min: 0, max: 5000, noNaN: true }),
    width: fc.integer({ min: 1, max: 10_000 }),
    height: fc.integer({ min: 1, max: 10_000 }),
  },
  { requiredKeys: ['version'] },
)

const refinementPoint = objectOf({
  x: maybe(unit),
  y: maybe(unit),
  label: maybe(fc.constantFrom('foreground', 'background')),
})
const box = objectOf({ x: maybe(unit), y: maybe(unit), width: maybe(unit), height: maybe(unit) })

describe('fuzzed input never gets a 5xx', () => {
  let key = ''
  let projectId = ''
  let newest = ''

  beforeAll(async () => {
    ;({ key } = await seedWorkspace({ credits: 1000 }))
    const project = await createProject(key, await succeededRemoval(key, 'astronaut.png'))
    projectId = project.id
    newest = project.currentRevisionId
  }, testBudget(2))

  it('removal options (JSON bodies)', async () => {
    await fc.assert(
      fc.asyncProperty(removalOptions, fc.option(fc.jsonValue(), { nil: undefined }), async (options, extra) => {
        const body = extra === undefined ? { uploadId: crypto.randomUUID(), options } : extra
        const res = await api('/v1/removals', {
          method: 'POST',
          key,
          json: body,
          headers: { 'idempotency-key': crypto.randomUUID() },
        })
        await expectHandled(res, body)
        expect(res.status).not.toBe(202) // no upload exists: nothing may be accepted
      }),
      { numRuns: RUNS },
    )
  })

  it('revisions: strokes and recipes, rasterised for real when valid', async () => {
    let made = 0
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.record({ strokes: fc.array(goodStroke, { maxLength: 3 }), recipe: goodRecipe }, { requiredKeys: [] }),
          fc.record({ strokes: maybe(fc.array(stroke, { maxLength: 4 })), recipe }, { requiredKeys: [] }),
        ),
        fc.boolean(),
        async (edit, stale) => {
          const body = { ...edit, baseRevisionId: stale ? crypto.randomUUID() : newest }
          const res = await api(`/v1/projects/${projectId}/revisions`, { method: 'POST', key, json: body })
          if (res.status === 201) {
            newest = ((await res.clone().json()) as { id: string }).id
            made++
          }
          await expectHandled(res, body)
        },
      ),
      { numRuns: RUNS },
    )
    expect(made).toBeGreaterThan(0) // valid edits were among the inputs, and they worked
  }, 120_000)

  it('refinements: points and boxes (against a stale base, so nothing is queued)', async () => {
    const stale = crypto.randomUUID()
    await fc.assert(
      fc.asyncProperty(
        fc.record({ points: maybe(fc.array(refinementPoint, { maxLength: 6 })), box }, { requiredKeys: [] }),
        async (refinement) => {
          const body = { ...refinement, baseRevisionId: stale }
          const res = await api(`/v1/projects/${projectId}/refinements`, { method: 'POST', key, json: body })
          await expectHandled(res, body)
          expect(res.status).not.toBe(202)
        },
      ),
      { numRuns: RUNS },
    )
  })

  it('exports: format and recipe (against a revision that does not exist, so nothing renders)', async () => {
    await fc.assert(
      fc.asyncProperty(maybe(fc.constantFrom('png', 'webp', 'jpeg', 'zip', 'psd')), recipe, async (format, r) => {
        const body = { revisionId: crypto.randomUUID(), format, recipe: r }
        const res = await api(`/v1/projects/${projectId}/exports`, {
          method: 'POST',
          key,
          json: body,
          headers: { prefer: 'wait=0' },
        })
        await expectHandled(res, body)
        expect([201, 202]).not.toContain(res.status)
      }),
      { numRuns: RUNS },
    )
  })

  const partName = fc.oneof(
    fc.constantFrom('image', 'options', 'person', 'garment', 'references', 'prompt', 'width', 'seed', 'layout'),
    // The test's own FormData cannot serialise a name ending in a backslash (the raw test sends one).
    fc.string({ maxLength: 10 }).filter((name) => !name.endsWith('\\')),
  )
  const partValue = fc.oneof(
    fc.string({ maxLength: 40 }),
    removalOptions.map((o) => JSON.stringify(o)),
    fc.uint8Array({ maxLength: 64 }).map((bytes) => new File([bytes], 'x.png', { type: 'image/png' })),
  )

  it('multipart bodies: any parts, any values, on every multipart route', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('/v1/removals', '/v1/virtual-try-ons', '/v1/catalog-images'),
        fc.array(fc.tuple(partName, partValue), { maxLength: 6 }),
        async (path, parts) => {
          const form = new FormData()
          for (const [name, value] of parts) form.append(name, value)
          const res = await api(path, { method: 'POST', key, body: form, headers: { 'idempotency-key': 'fuzz' } })
          await expectHandled(
            res,
            parts.map(([n, v]) => [n, typeof v === 'string' ? v : `<file ${v.size}>`]),
          )
          expect(res.status).toBeGreaterThanOrEqual(400) // random bytes are never an image
        },
      ),
      { numRuns: RUNS },
    )
  })

  it('multipart bytes: a broken or hostile body is a 4xx', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('/v1/removals', '/v1/virtual-try-ons', '/v1/catalog-images'),
        fc.oneof(fc.constant('fuzz'), fc.string({ maxLength: 20 })),
        fc.oneof(
          fc.string({ maxLength: 200 }),
          fc
            .array(fc.tuple(partName, fc.string({ maxLength: 20 }), fc.boolean()), { maxLength: 4 })
            .map((parts) =>
              parts
                .map(
                  ([n, v, file]) =>
                    `--fuzz\r\nContent-Disposition: form-data; name="${n}"${file ? '; filename="a.png"' : ''}\r\n\r\n${v}\r\n`,
                )
                .join(''),
            ),
        ),
        async (path, boundary, body) => {
          const res = await api(path, {
            method: 'POST',
            key,
            body,
            headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, 'idempotency-key': 'fuzz-raw' },
          })
          await expectHandled(res, { boundary, body })
          expect(res.status).toBeGreaterThanOrEqual(400)
        },
      ),
      { numRuns: RUNS },
    )
  })

  it('spends nothing: no credit moved for any refused input', async () => {
    const res = await api('/v1/usage', { key })
    // One removal made the project's source; nothing the fuzzers sent was charged or left held.
    expect(await res.json()).toMatchObject({ used: 1, held: 0 })
  })
})
