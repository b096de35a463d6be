/**
 * Retention (SPEC.md §8; docs/decisions.md "Retention"): the cron trigger, run with its
 * clock moved forward, deletes every kind of stored bytes at its time and the rows that only hold
 * secrets or state; reads then answer 410 while metadata stays, and a project keeps its bytes.
 */
import { createExecutionContext, createScheduledController, env, waitOnExecutionContext } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'
import type { Env } from '../../src/env'
import worker from '../../src/index'
import { sweepUploads } from '../../src/services/retention'
import { newEmail, signIn } from './auth-helpers'
import {
  api,
  expectProblem,
  fixtureBytes,
  modelBudget,
  RAW_CUTOUT,
  removal,
  seedWorkspace,
  settled,
  TERMINAL,
  testBudget,
  uploadImage,
  usage,
  waitForStatus,
} from './helpers'
import { createProject, jobEnded } from './project-helpers'

const HOUR = 3_600_000

/** Nothing was accepted in the workspace: no job, no credit hold, its 3 credits untouched. */
async function expectNothingAccepted(key: string, workspaceId: string): Promise<void> {
  expect(((await (await api('/v1/jobs', { key })).json()) as { jobs: unknown[] }).jobs).toEqual([])
  const holds = await env.DB.prepare('SELECT COUNT(*) AS n FROM credit_holds WHERE workspace_id = ?')
    .bind(workspaceId)
    .first<{ n: number }>()
  expect(holds?.n).toBe(0)
  expect(await usage(key)).toMatchObject({ held: 0, used: 0, available: 3 })
}

/** Runs the Worker's cron handler as Cloudflare would, `offsetMs` from now. */
async function cronAt(offsetMs: number): Promise<void> {
  const ctx = createExecutionContext()
  const controller = createScheduledController({ scheduledTime: new Date(Date.now() + offsetMs), cron: '*/15 * * * *' })
  await worker.scheduled(controller, env, ctx)
  await waitOnExecutionContext(ctx)
}

async function storedKeys(): Promise<string[]> {
  const keys: string[] = []
  let cursor: string | undefined
  do {
    const page = await env.BUCKET.list({ cursor })
    keys.push(...page.objects.map((o) => o.key))
    cursor = page.truncated ? page.cursor : undefined
  } while (cursor)
  return keys
}

const photo = async (name = 'astronaut.png') => new File([await fixtureBytes(name)], name, { type: 'image/png' })

function multipartRemoval(key: string, file: File, wait = 8) {
  const form = new FormData()
  form.set('image', file)
  form.set('options', JSON.stringify(RAW_CUTOUT))
  return api('/v1/removals', {
    method: 'POST',
    key,
    body: form,
    headers: { 'idempotency-key': crypto.randomUUID(), prefer: `wait=${wait}` },
  })
}

describe('the retention sweep', () => {
  it(
    'leaves no expired bytes: results, exports, catalog images, sources and uploads go at their time; projects stay',
    async () => {
      const { key } = await seedWorkspace()
      // A removal from a multipart file (its source is the job's own), one from an upload, a
      // project with an export made from the latter, a catalog image, and a job that failed.
      const fromFile = await settled(await multipartRemoval(key, await photo()), { key })
      const upload = await uploadImage(key, await fixtureBytes('astronaut.png'))
      const fromUpload = await settled(await removal(key, { uploadId: upload.id, options: RAW_CUTOUT }, { wait: 8 }), {
        key,
      })
      expect([fromFile.status, fromUpload.status]).toEqual(['succeeded', 'succeeded'])
      const project = await createProject(key, fromUpload.id)
      const exported = await api(`/v1/projects/${project.id}/exports`, {
        method: 'POST',
        key,
        json: { format: 'png' },
        headers: { prefer: 'wait=0' },
      })
      const exportId = ((await exported.json()) as { id: string }).id
      expect(await jobEnded(exportId)).toBe('succeeded')
      const catalogForm = new FormData()
      catalogForm.append('references', await photo('coffee.png'))
      const catalog = await api('/v1/catalog-images', { method: 'POST', key, body: catalogForm })
      expect(catalog.status).toBe(201)
      const catalogUrl = catalog.headers.get('location')!
      const cut = new File([(await fixtureBytes('astronaut.png')).subarray(0, 4096)], 'cut.png')
      const failed = await settled(await multipartRemoval(key, cut), { key })
      expect(failed.status).toBe('failed')

      const resultOf = (job: { id: string }) => api(`/v1/jobs/${job.id}/result`, { key })
      const exportResult = `/v1/projects/${project.id}/exports/${exportId}/result`
      const before = await storedKeys()
      expect(before).toEqual(
        expect.arrayContaining([
          `sources/${fromFile.id}`,
          `sources/${failed.id}`,
          `uploads/${upload.id}`,
          `results/${fromFile.id}.png`,
          `results/${fromUpload.id}.png`,
          `exports/${exportId}.png`,
        ]),
      )

      // Now: only the failed job's source goes (nothing can use it); every result is kept.
      await cronAt(0)
      expect(await env.BUCKET.head(`sources/${failed.id}`)).toBeNull()
      expect(await env.BUCKET.head(`sources/${fromFile.id}`)).not.toBeNull()
      for (const res of [await resultOf(fromFile), await resultOf(fromUpload), await api(exportResult, { key })]) {
        expect(res.status).toBe(200)
        await res.arrayBuffer()
      }
      expect((await api(catalogUrl, { key })).status).toBe(200)

      // 23 hours on: still kept (retention is 24 hours after completion).
      await cronAt(23 * HOUR)
      expect((await storedKeys()).length).toBe(before.length - 1)

      // 25 hours on: every result, export and catalog image answers 410; their metadata stays.
      await cronAt(25 * HOUR)
      for (const job of [fromFile, fromUpload]) {
        await expectProblem(await resultOf(job), 410, 'asset_expired')
        const read = (await (await api(`/v1/jobs/${job.id}`, { key })).json()) as { status: string; result: unknown }
        expect(read).toMatchObject({ status: 'succeeded', result: null })
      }
      await expectProblem(await api(exportResult, { key }), 410, 'asset_expired')
      await expectProblem(await api(catalogUrl, { key }), 410, 'asset_expired')
      // The upload's bytes and row are gone too: naming it is a plain 400.
      await expectProblem(
        await removal(key, { uploadId: upload.id, options: RAW_CUTOUT }),
        400,
        'invalid_input',
        'uploadId',
      )
      // Nothing is left but the project's own copies, which live until the project is deleted.
      const left = await storedKeys()
      expect(left.length).toBeGreaterThan(0)
      expect(left.filter((k) => !k.startsWith(`projects/${project.id}/`))).toEqual([])
      expect((await api(`/v1/projects/${project.id}`, { key })).status).toBe(200)
      expect(await usage(key)).toMatchObject({ held: 0, used: 3 })
    },
    testBudget(5),
  )

  it('a refused request leaves no source behind: a try-on whose garment is not an image', async () => {
    const { key } = await seedWorkspace()
    const before = await storedKeys()
    const form = new FormData()
    form.set('person', await photo())
    form.set('garment', new File([new TextEncoder().encode('not an image')], 'shirt.png'))
    form.set('options', JSON.stringify({ category: 'upper_body' }))
    const res = await api('/v1/virtual-try-ons', {
      method: 'POST',
      key,
      body: form,
      headers: { 'idempotency-key': crypto.randomUUID() },
    })
    await expectProblem(res, 415, 'unsupported_media', 'garment')
    expect(await storedKeys()).toEqual(before)
    expect(await usage(key)).toMatchObject({ held: 0, used: 0 })
  })

  it(
    'deletes rows that only hold secrets or state once they cannot be used',
    async () => {
      // Two sessions; one logs out. A device authorization, and an idempotency record.
      const kept = await signIn()
      const email = newEmail('leaver')
      const leaver = await signIn(email)
      expect(
        (await api('/v1/auth/logout', { method: 'POST', json: { refreshToken: leaver.refreshToken } })).status,
      ).toBe(204)
      const device = await api('/v1/device-authorizations', { method: 'POST', json: { client: 'retention test' } })
      expect(device.status).toBe(201)
      const { deviceCode } = (await device.json()) as { deviceCode: string }
      const { key } = await seedWorkspace()
      const cut = new File([(await fixtureBytes('astronaut.png')).subarray(0, 4096)], 'cut.png')
      const idempotencyKey = crypto.randomUUID()
      const form = () => {
        const f = new FormData()
        f.set('image', cut)
        f.set('options', JSON.stringify(RAW_CUTOUT))
        return f
      }
      const post = (options: object = RAW_CUTOUT) => {
        const f = form()
        f.set('options', JSON.stringify(options))
        return api('/v1/removals', { method: 'POST', key, body: f, headers: { 'idempotency-key': idempotencyKey } })
      }
      expect((await post()).status).toBe(202)
      const other = { ...RAW_CUTOUT, output: 'mask' as const }
      await expectProblem(await post(other), 409, 'idempotency_conflict', 'Idempotency-Key')
      const count = async (table: string, where = '1 = 1', ...binds: string[]) =>
        (
          await env.DB.prepare(`SELECT COUNT(*) AS n FROM ${table} WHERE ${where}`)
            .bind(...binds)
            .first<{ n: number }>()
        )?.n
      expect(await count('email_challenges', 'email = ?', email)).toBe(1)

      // Two hours on: the spent sign-in code and the logged-out session are gone; the rest stays.
      await cronAt(2 * HOUR)
      expect(await count('email_challenges', 'email = ?', email)).toBe(0)
      expect(await count('sessions', 'user_id = ?', leaver.user.id)).toBe(0)
      expect(await count('sessions', 'user_id = ?', kept.user.id)).toBe(1)
      expect((await api('/v1/usage', { key: kept.accessToken })).status).toBe(200)
      await expectProblem(await post(other), 409, 'idempotency_conflict', 'Idempotency-Key')
      // 23 hours on: the key is still held (SPEC.md §4: retained at least 24 hours).
      await cronAt(23 * HOUR)
      await expectProblem(await post(other), 409, 'idempotency_conflict', 'Idempotency-Key')

      // 31 days on: refresh tokens expired, so the session goes with them; the device code a day
      // past its expiry and the idempotency record past its 24 hours are gone too.
      await cronAt(31 * 24 * HOUR)
      expect(await count('sessions', 'user_id = ?', kept.user.id)).toBe(0)
      expect(await count('refresh_tokens')).toBe(0)
      await expectProblem(
        await api('/v1/auth/refresh', { method: 'POST', json: { refreshToken: kept.refreshToken } }),
        401,
        'invalid_api_key',
      )
      await expectProblem(await api('/v1/usage', { key: kept.accessToken }), 401, 'invalid_api_key')
      const poll = await api('/v1/device-authorizations/token', { method: 'POST', json: { deviceCode } })
      await expectProblem(poll, 400, 'invalid_input', 'deviceCode')
      // The key is free again: different input is a new request, not a conflict.
      expect((await post(other)).status).toBe(202)
    },
    modelBudget(1),
  )
})

/**
 * `db` with `step` run once, the first time a statement whose SQL contains `sql` is about to run
 * in a batch (`when: 'before-batch'`), has run in one (`'after-batch'`) or has returned its rows
 * (`when: 'after-all'`, given to `step`): the moment a concurrent request or sweep would cut in,
 * made exact, with no timer.
 */
function cutIn(
  db: D1Database,
  sql: string,
  when: 'before-batch' | 'after-batch' | 'after-all',
  step: (rows?: D1Result) => Promise<unknown>,
): D1Database {
  const marked = new WeakSet<D1PreparedStatement>()
  let pending: typeof step | null = step
  const runOnce = async (rows?: D1Result) => {
    const run = pending
    pending = null
    await run?.(rows)
  }
  return new Proxy(db, {
    get(target, prop) {
      if (prop === 'prepare') {
        return (text: string) => {
          const statement = target.prepare(text)
          if (!text.includes(sql)) return statement
          const bind = statement.bind.bind(statement)
          statement.bind = (...values: unknown[]) => {
            const bound = bind(...values)
            marked.add(bound)
            if (when === 'after-all') {
              const all = bound.all.bind(bound)
              bound.all = (async () => {
                const rows = await all()
                await runOnce(rows)
                return rows
              }) as typeof bound.all
            }
            return bound
          }
          return statement
        }
      }
      if (prop === 'batch' && when !== 'after-all') {
        return async (statements: D1PreparedStatement[]) => {
          const meets = statements.some((s) => marked.has(s))
          if (meets && when === 'before-batch') await runOnce()
          const results = await target.batch(statements)
          if (meets && when === 'after-batch') await runOnce()
          return results
        }
      }
      const value = Reflect.get(target, prop)
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
}

/** POSTs `body` to the Worker's own fetch handler, as `api` does, but with `bindings` for the test's env. */
async function postWith(bindings: Env, key: string, path: string, body: unknown): Promise<Response> {
  const ctx = createExecutionContext()
  const request = new Request(`https://api.test${path}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      'idempotency-key': crypto.randomUUID(),
      'cf-connecting-ip': '203.0.113.77',
    },
    body: JSON.stringify(body),
  })
  const res = await worker.fetch(request, bindings, ctx)
  await waitOnExecutionContext(ctx)
  return res
}

const withDb = (db: D1Database) => new Proxy(env, { get: (t, p) => (p === 'DB' ? db : Reflect.get(t, p)) }) as Env

// A removal naming a day-old upload while the retention sweep removes it. Each ordering of the two
// is made exact by running one inside the other at the statement where they would meet.
describe('a removal and the upload sweep at the same moment', () => {
  it('the sweep removes the upload after the removal read it, before its job is inserted: 400, nothing held', async () => {
    const { key, workspaceId } = await seedWorkspace({ credits: 3 })
    const upload = await uploadImage(key, await fixtureBytes('astronaut.png'))
    const sweep = () => sweepUploads(env, new Date(Date.now() + 25 * HOUR))
    const db = cutIn(env.DB, 'SET held = held +', 'before-batch', sweep)
    const res = await postWith(withDb(db), key, '/v1/removals', { uploadId: upload.id, options: RAW_CUTOUT })
    const body = await expectProblem(res, 400, 'invalid_input', 'uploadId')
    expect(body.detail).toBe(`No upload ${upload.id} in this workspace`)
    // The same answer as naming the upload after the sweep, and no job, hold or credit spent.
    await expectProblem(
      await removal(key, { uploadId: upload.id, options: RAW_CUTOUT }),
      400,
      'invalid_input',
      'uploadId',
    )
    await expectNothingAccepted(key, workspaceId)
  })

  it('a batch whose uploads the sweep removes before its jobs are inserted: 400 naming the first, nothing held', async () => {
    const { key, workspaceId } = await seedWorkspace({ credits: 3 })
    const first = await uploadImage(key, await fixtureBytes('astronaut.png'))
    const second = await uploadImage(key, await fixtureBytes('astronaut.png'))
    const sweep = () => sweepUploads(env, new Date(Date.now() + 25 * HOUR))
    const db = cutIn(env.DB, 'SET held = held +', 'before-batch', sweep)
    const res = await postWith(withDb(db), key, '/v1/batches', {
      uploadIds: [first.id, second.id],
      options: RAW_CUTOUT,
    })
    const body = await expectProblem(res, 400, 'invalid_input', 'uploadIds.0')
    expect(body.detail).toBe(`No upload ${first.id} in this workspace`)
    const count = async (table: string) =>
      (
        await env.DB.prepare(`SELECT COUNT(*) AS n FROM ${table} WHERE workspace_id = ?`)
          .bind(workspaceId)
          .first<{ n: number }>()
      )?.n
    expect({ batches: await count('batches'), jobs: await count('jobs'), holds: await count('credit_holds') }).toEqual({
      batches: 0,
      jobs: 0,
      holds: 0,
    })
    expect(await usage(key)).toMatchObject({ held: 0, used: 0, available: 3 })
  })

  it(
    'the sweep chose the upload before the removal inserted its job: the upload stays and the job succeeds',
    async () => {
      const { key } = await seedWorkspace({ credits: 3 })
      const upload = await uploadImage(key, await fixtureBytes('astronaut.png'))
      let accepted: Response | undefined
      let chosen = false
      const db = cutIn(env.DB, 'FROM uploads u', 'after-all', async (rows) => {
        chosen = ((rows?.results ?? []) as { id: string }[]).some((r) => r.id === upload.id)
        accepted = await removal(key, { uploadId: upload.id, options: RAW_CUTOUT })
      })
      await sweepUploads({ DB: db, BUCKET: env.BUCKET }, new Date(Date.now() + 25 * HOUR))
      expect(chosen, 'the sweep chose the upload before the job existed').toBe(true)
      expect(accepted?.status).toBe(202)
      const job = (await accepted!.json()) as { id: string }
      // The sweep asked again as it deleted: a job now needs the upload, so row and bytes stay.
      expect(await env.BUCKET.head(`uploads/${upload.id}`)).not.toBeNull()
      const final = await waitForStatus(key, job.id, TERMINAL)
      expect(final).toMatchObject({ status: 'succeeded', error: null })
      expect(await usage(key)).toMatchObject({ held: 0, used: 1, available: 2 })
      // Once the job's result is kept no longer, a later sweep takes the upload.
      await sweepUploads(env, new Date(Date.now() + 49 * HOUR))
      expect(await env.BUCKET.head(`uploads/${upload.id}`)).toBeNull()
      await expectProblem(
        await removal(key, { uploadId: upload.id, options: RAW_CUTOUT }),
        400,
        'invalid_input',
        'uploadId',
      )
    },
    modelBudget(1),
  )
})

// A try-on reads two sources; the sweep must ask about both, and the accept must refuse a garment
// (or person) upload the sweep removed after the request read it.
describe('a try-on and the upload sweep', () => {
  const TRY_ON = { category: 'upper_body', seed: 7 } as const
  const tryOn = (key: string, body: unknown) =>
    api('/v1/virtual-try-ons', { method: 'POST', key, json: body, headers: { 'idempotency-key': crypto.randomUUID() } })

  it(
    'keeps a day-old garment upload while the try-on is queued and while its result is kept; then it goes',
    async () => {
      const { key, workspaceId } = await seedWorkspace({ credits: 3 })
      const person = await uploadImage(key, await fixtureBytes('astronaut.png'))
      const garment = await uploadImage(key, await fixtureBytes('garment-shirt.png'))
      // A day on, the sweep runs just after the try-on's job row is inserted, before its runner starts.
      let queued: string | undefined
      const db = cutIn(env.DB, 'INSERT INTO jobs', 'after-batch', async () => {
        const row = await env.DB.prepare('SELECT status FROM jobs WHERE workspace_id = ?')
          .bind(workspaceId)
          .first<{ status: string }>()
        queued = row?.status
        await sweepUploads(env, new Date(Date.now() + 25 * HOUR))
      })
      const res = await postWith(withDb(db), key, '/v1/virtual-try-ons', {
        person: { uploadId: person.id },
        garment: { uploadId: garment.id },
        options: TRY_ON,
      })
      expect(res.status).toBe(202)
      expect(queued, 'the sweep ran while the job was queued').toBe('queued')
      expect(await env.BUCKET.head(`uploads/${garment.id}`), 'the garment survives the sweep').not.toBeNull()
      expect(await env.BUCKET.head(`uploads/${person.id}`)).not.toBeNull()
      const job = (await res.json()) as { id: string }
      const final = await waitForStatus(key, job.id, TERMINAL)
      expect(final).toMatchObject({ kind: 'virtual_try_on', status: 'succeeded', error: null })
      expect(await usage(key)).toMatchObject({ held: 0, used: 1, available: 2 })

      // The last moment its result is kept: a sweep still leaves both images.
      const expiresAt = Date.parse(final.expiresAt as string)
      await sweepUploads(env, new Date(expiresAt - 1))
      expect(await env.BUCKET.head(`uploads/${garment.id}`), 'kept with the result').not.toBeNull()
      expect(await env.BUCKET.head(`uploads/${person.id}`)).not.toBeNull()

      // Once it is not, a sweep takes both, and naming the garment is a plain 400.
      await sweepUploads(env, new Date(expiresAt))
      expect(await env.BUCKET.head(`uploads/${garment.id}`)).toBeNull()
      expect(await env.BUCKET.head(`uploads/${person.id}`)).toBeNull()
      const other = await uploadImage(key, await fixtureBytes('astronaut.png'))
      await expectProblem(
        await tryOn(key, { person: { uploadId: other.id }, garment: { uploadId: garment.id }, options: TRY_ON }),
        400,
        'invalid_input',
        'garment.uploadId',
      )
    },
    modelBudget(1),
  )

  it('the sweep removes the garment upload before the try-on is inserted: 400 naming it, nothing held or stored', async () => {
    const { key, workspaceId } = await seedWorkspace({ credits: 3 })
    const garment = await uploadImage(key, await fixtureBytes('garment-shirt.png'))
    const before = await storedKeys()
    const sweep = () => sweepUploads(env, new Date(Date.now() + 25 * HOUR))
    const db = cutIn(env.DB, 'SET held = held +', 'before-batch', sweep)
    // The person comes from a URL (stored by the request under the job's own prefix), so only the
    // garment is an upload the sweep can take.
    const res = await postWith(withDb(db), key, '/v1/virtual-try-ons', {
      person: { sourceUrl: `${env.FIXTURE_ORIGIN}/files/astronaut.png` },
      garment: { uploadId: garment.id },
      options: TRY_ON,
    })
    const body = await expectProblem(res, 400, 'invalid_input', 'garment.uploadId')
    expect(body.detail).toBe(`No upload ${garment.id} in this workspace`)
    // The same answer as naming the garment after the sweep; no job, hold, credit or stored person.
    await expectProblem(
      await tryOn(key, {
        person: { sourceUrl: `${env.FIXTURE_ORIGIN}/files/astronaut.png` },
        garment: { uploadId: garment.id },
        options: TRY_ON,
      }),
      400,
      'invalid_input',
      'garment.uploadId',
    )
    await expectNothingAccepted(key, workspaceId)
    expect((await storedKeys()).filter((k) => !before.includes(k))).toEqual([])
    expect(await env.BUCKET.head(`uploads/${garment.id}`)).toBeNull()
  })
})
