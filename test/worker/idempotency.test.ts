import { describe, expect, it } from 'vitest'
import { env } from 'cloudflare:test'
import {
  api,
  BINARY_MASK,
  expectProblem,
  fixtureBytes,
  modelBudget,
  RAW_CUTOUT,
  removal,
  seedWorkspace,
  TERMINAL,
  testBudget,
  uploadImage,
  usage,
  waitForJobs,
  waitForStatus,
} from './helpers'
import { createProject, jobEnded, type ProjectView, succeededRemoval } from './project-helpers'

describe('Idempotency-Key', () => {
  it('replays the first response for the same key and input, and creates one job', async () => {
    const { key, workspaceId } = await seedWorkspace()
    const upload = await uploadImage(key, await fixtureBytes('astronaut.png'))
    const idempotencyKey = crypto.randomUUID()
    const first = await removal(key, { uploadId: upload.id, options: RAW_CUTOUT }, { idempotencyKey })
    expect(first.status).toBe(202)
    const firstBody = await first.text()
    const second = await removal(key, { uploadId: upload.id, options: RAW_CUTOUT }, { idempotencyKey })
    expect(second.status).toBe(202)
    expect(await second.text()).toBe(firstBody)
    expect(second.headers.get('location')).toBe(first.headers.get('location'))
    const { n } = (await env.DB.prepare('SELECT COUNT(*) AS n FROM jobs WHERE workspace_id = ?')
      .bind(workspaceId)
      .first<{ n: number }>())!
    expect(n).toBe(1)
    const u = await usage(key)
    expect(u.held + u.used).toBe(1)
    const { id } = JSON.parse(firstBody) as { id: string }
    expect((await waitForStatus(key, id, TERMINAL)).status).toBe('succeeded')
    expect(await usage(key)).toMatchObject({ held: 0, used: 1 })
  })

  it('409 idempotency_conflict for the same key with different input', async () => {
    const { key } = await seedWorkspace()
    const upload = await uploadImage(key, await fixtureBytes('astronaut.png'))
    const idempotencyKey = crypto.randomUUID()
    const first = await removal(key, { uploadId: upload.id, options: RAW_CUTOUT }, { idempotencyKey })
    expect(first.status).toBe(202)
    const res = await removal(key, { uploadId: upload.id, options: BINARY_MASK }, { idempotencyKey })
    await expectProblem(res, 409, 'idempotency_conflict', 'Idempotency-Key')
    const { id } = (await first.json()) as { id: string }
    expect((await waitForStatus(key, id, TERMINAL)).status).toBe('succeeded')
  })

  it('keys are per workspace, and a failed request frees its key', async () => {
    const a = await seedWorkspace({ credits: 0 })
    const idempotencyKey = crypto.randomUUID()
    await expectProblem(
      await removal(a.key, { uploadId: crypto.randomUUID(), options: RAW_CUTOUT }, { idempotencyKey }),
      402,
      'quota_exhausted',
    )
    await env.DB.prepare('UPDATE credit_accounts SET credit_limit = 5 WHERE workspace_id = ?').bind(a.workspaceId).run()
    const upload = await uploadImage(a.key, await fixtureBytes('astronaut.png'))
    const resA = await removal(a.key, { uploadId: upload.id, options: RAW_CUTOUT }, { idempotencyKey })
    expect(resA.status).toBe(202)
    const b = await seedWorkspace()
    const uploadB = await uploadImage(b.key, await fixtureBytes('astronaut.png'))
    const resB = await removal(b.key, { uploadId: uploadB.id, options: RAW_CUTOUT }, { idempotencyKey })
    expect(resB.status).toBe(202)
    // Two jobs, one per workspace, both run.
    const [jobA, jobB] = (await Promise.all([resA.json(), resB.json()])) as { id: string }[]
    expect(jobA.id).not.toBe(jobB.id)
    const ended = await waitForJobs((i) => [a.key, b.key][i], [jobA.id, jobB.id], modelBudget(2))
    expect(ended.map((j) => j.status)).toEqual(['succeeded', 'succeeded'])
  })
})

/**
 * SPEC.md §4's Idempotency-Key on the routes that create without requiring one: the same key and
 * body answer the first resource (one created), the same key with another body is 409, and no key
 * creates each time. One removal feeds every project route; the rest is bookkeeping.
 */
describe('Idempotency-Key on creating endpoints', () => {
  /** A POST with an optional Idempotency-Key; returns the status and the created id. */
  async function post(key: string, path: string, body: unknown, idempotencyKey?: string, wait?: number) {
    const headers: Record<string, string> = {}
    if (idempotencyKey) headers['idempotency-key'] = idempotencyKey
    if (wait !== undefined) headers.prefer = `wait=${wait}`
    const res = await api(path, { method: 'POST', key, json: body, headers })
    const text = await res.text()
    return { res, status: res.status, text, id: (JSON.parse(text) as { id?: string }).id }
  }

  /**
   * The three rules for one route: a replay (same id, nothing new), a 409 for other input, and two
   * creations without a key. `count` reads how many exist; `expectStatus` is the route's success.
   */
  async function checkRoute(opts: {
    key: string
    path: string
    body: unknown
    other: unknown
    expectStatus: number
    count: () => Promise<number>
    wait?: number
    /** The body sent twice without a key, when `body` no longer fits (default `body`). */
    unkeyedBody?: () => Promise<unknown>
    /** Creates twice without a key (default), or the second is refused as described. */
    unkeyedSecond?: (second: Awaited<ReturnType<typeof post>>) => Promise<void>
  }) {
    const { key, path, body, other, expectStatus, count, wait } = opts
    const before = await count()
    const idempotencyKey = crypto.randomUUID()
    const first = await post(key, path, body, idempotencyKey, wait)
    expect(first.status, `${path}: ${first.text}`).toBe(expectStatus)
    const replay = await post(key, path, body, idempotencyKey, wait)
    expect(replay.status, `${path} replay: ${replay.text}`).toBe(expectStatus)
    expect(replay.id, path).toBe(first.id)
    expect(replay.res.headers.get('location'), path).toBe(first.res.headers.get('location'))
    expect(await count(), path).toBe(before + 1)

    const conflict = await api(path, {
      method: 'POST',
      key,
      json: other,
      headers: { 'idempotency-key': idempotencyKey },
    })
    await expectProblem(conflict, 409, 'idempotency_conflict', 'Idempotency-Key')
    expect(await count(), path).toBe(before + 1)

    const unkeyed = opts.unkeyedBody ? await opts.unkeyedBody() : body
    const a = await post(key, path, unkeyed, undefined, wait)
    expect(a.status, `${path} without a key: ${a.text}`).toBe(expectStatus)
    expect(a.id).not.toBe(first.id)
    const b = await post(key, path, unkeyed, undefined, wait)
    if (opts.unkeyedSecond) return opts.unkeyedSecond(b)
    expect(b.status, `${path} without a key, again: ${b.text}`).toBe(expectStatus)
    expect(b.id).not.toBe(a.id)
    expect(await count(), path).toBe(before + 3)
  }

  it('/openapi.json documents the optional Idempotency-Key and its 409 on every creating route', async () => {
    const doc = (await (await api('/openapi.json')).json()) as {
      paths: Record<
        string,
        Record<
          string,
          {
            parameters?: { name: string; in: string; required?: boolean }[]
            responses: Record<string, { description: string }>
          }
        >
      >
    }
    const creating = [
      '/v1/projects',
      '/v1/projects/{id}/revisions',
      '/v1/projects/{id}/refinements',
      '/v1/projects/{id}/exports',
      '/v1/webhooks',
      '/v1/api-keys',
    ]
    for (const path of creating) {
      const op = doc.paths[path].post
      const header = op.parameters?.find((p) => p.in === 'header' && p.name.toLowerCase() === 'idempotency-key')
      expect(header, path).toBeDefined()
      expect(header?.required ?? false, path).toBe(false)
      expect(op.responses['409'].description, path).toContain('idempotency_conflict')
    }
  })

  const countRows = async (sql: string, ...args: unknown[]) =>
    (await env.DB.prepare(sql)
      .bind(...args)
      .first<{ n: number }>())!.n

  it(
    'projects, revisions, refinements and exports: a replay is the first resource, other input 409, no key creates',
    async () => {
      const { key, workspaceId } = await seedWorkspace()
      const jobId = await succeededRemoval(key, 'astronaut.png')
      const countProjects = () => countRows('SELECT COUNT(*) AS n FROM projects WHERE workspace_id = ?', workspaceId)
      await checkRoute({
        key,
        path: '/v1/projects',
        body: { jobId, name: 'Once' },
        other: { jobId, name: 'Twice' },
        expectStatus: 201,
        count: countProjects,
      })

      // A revision retried after it succeeded is that revision, not 409 revision_conflict; without
      // a key the same edit again is a new edit on a stale base.
      const forRevisions = await createProject(key, jobId)
      const revisions = `/v1/projects/${forRevisions.id}/revisions`
      const countRevisions = () =>
        countRows('SELECT COUNT(*) AS n FROM revisions WHERE project_id = ?', forRevisions.id)
      const base = forRevisions.currentRevisionId
      const dot = { tool: 'erase', points: [[0.5, 0.5]], size: 0.05 }
      await checkRoute({
        key,
        path: revisions,
        body: { baseRevisionId: base, strokes: [dot] },
        other: { baseRevisionId: base, strokes: [{ ...dot, tool: 'restore' }] },
        expectStatus: 201,
        count: countRevisions,
        unkeyedBody: async () => {
          const project = (await (await api(`/v1/projects/${forRevisions.id}`, { key })).json()) as ProjectView
          return { baseRevisionId: project.currentRevisionId, strokes: [dot] }
        },
        unkeyedSecond: async (second) => {
          // The first unkeyed edit was based on a revision that is no longer the newest.
          expect(second.status).toBe(409)
          expect(JSON.parse(second.text)).toMatchObject({ code: 'revision_conflict' })
        },
      })

      // Refinements: a replay spends none of the 20. A refinement ends as a new revision, so the
      // unkeyed pair goes to a second project, together on its first revision: both are accepted
      // before either can end.
      const [forRefinements, forUnkeyed] = [await createProject(key, jobId), await createProject(key, jobId)]
      const refinements = `/v1/projects/${forRefinements.id}/refinements`
      const box = { x: 0.3, y: 0.1, width: 0.4, height: 0.35 }
      const refinementBody = { baseRevisionId: forRefinements.currentRevisionId, box }
      const used = async (project = forRefinements) =>
        ((await (await api(`/v1/projects/${project.id}`, { key })).json()) as ProjectView).refinementsUsed
      const idempotencyKey = crypto.randomUUID()
      const first = await post(key, refinements, refinementBody, idempotencyKey)
      expect(first.status, first.text).toBe(202)
      const replay = await post(key, refinements, refinementBody, idempotencyKey)
      expect([replay.status, replay.id]).toEqual([202, first.id])
      expect(await used()).toBe(1)
      await expectProblem(
        await api(refinements, {
          method: 'POST',
          key,
          json: { ...refinementBody, box: { ...box, x: 0.2 } },
          headers: { 'idempotency-key': idempotencyKey },
        }),
        409,
        'idempotency_conflict',
        'Idempotency-Key',
      )
      expect(await used()).toBe(1)
      const unkeyedPath = `/v1/projects/${forUnkeyed.id}/refinements`
      const unkeyedBody = { baseRevisionId: forUnkeyed.currentRevisionId, box }
      const unkeyed = await Promise.all([post(key, unkeyedPath, unkeyedBody), post(key, unkeyedPath, unkeyedBody)])
      expect(unkeyed.map((r) => r.status)).toEqual([202, 202])
      expect(unkeyed[0].id).not.toBe(unkeyed[1].id)
      expect(await used(forUnkeyed)).toBe(2)

      const forExports = await createProject(key, jobId)
      const countExports = () =>
        countRows("SELECT COUNT(*) AS n FROM jobs WHERE project_id = ? AND kind = 'export'", forExports.id)
      await checkRoute({
        key,
        path: `/v1/projects/${forExports.id}/exports`,
        body: { format: 'png' },
        other: { format: 'webp' },
        expectStatus: 202,
        wait: 0,
        count: countExports,
      })

      // Nothing left running for the next test.
      const { results } = await env.DB.prepare(
        "SELECT id FROM jobs WHERE workspace_id = ? AND kind IN ('refinement', 'export')",
      )
        .bind(workspaceId)
        .all<{ id: string }>()
      for (const { id } of results) await jobEnded(id)
    },
    testBudget(4),
  )

  it('webhooks: a replay answers the same endpoint and its secret; other input 409; no key creates', async () => {
    const { key } = await seedWorkspace()
    const listed = async () =>
      ((await (await api('/v1/webhooks', { key })).json()) as { endpoints: unknown[] }).endpoints.length
    const url = `${env.FIXTURE_ORIGIN}/receiver/idempotent-${crypto.randomUUID()}`
    await checkRoute({
      key,
      path: '/v1/webhooks',
      body: { url },
      other: { url: `${url}-other` },
      expectStatus: 201,
      count: listed,
    })
    // The replay's secret is the endpoint's, read back from its encrypted copy.
    const idempotencyKey = crypto.randomUUID()
    const first = await post(key, '/v1/webhooks', { url, events: ['image.job.failed.v1'] }, idempotencyKey)
    const replay = await post(key, '/v1/webhooks', { url, events: ['image.job.failed.v1'] }, idempotencyKey)
    const [a, b] = [first.text, replay.text].map((t) => JSON.parse(t) as { secret: string })
    expect(a.secret).toMatch(/^whsec_/)
    expect(b).toEqual(a)
  })

  it('a claim its Worker left unfinished is taken over by the same request once abandoned, not before', async () => {
    const { key, workspaceId } = await seedWorkspace()
    const url = `${env.FIXTURE_ORIGIN}/receiver/abandoned-${crypto.randomUUID()}`
    const idempotencyKey = crypto.randomUUID()
    const first = await post(key, '/v1/webhooks', { url }, idempotencyKey)
    expect(first.status).toBe(201)
    // What a Worker that died between claiming the key and storing its answer leaves behind.
    const leftUnfinished = (minutesAgo: number) =>
      env.DB.prepare(
        `UPDATE idempotency_keys SET state = 'in_progress', response_status = NULL, response_body = NULL,
           created_at = ? WHERE workspace_id = ? AND key = ?`,
      )
        .bind(new Date(Date.now() - minutesAgo * 60_000).toISOString(), workspaceId, idempotencyKey)
        .run()
    await leftUnfinished(1)
    const early = await api('/v1/webhooks', {
      key,
      method: 'POST',
      json: { url },
      headers: { 'idempotency-key': idempotencyKey },
    })
    await expectProblem(early, 409, 'idempotency_conflict', 'Idempotency-Key')
    await leftUnfinished(16)
    const other = await api('/v1/webhooks', {
      key,
      method: 'POST',
      json: { url: `${url}-other` },
      headers: { 'idempotency-key': idempotencyKey },
    })
    await expectProblem(other, 409, 'idempotency_conflict', 'Idempotency-Key')
    const retried = await post(key, '/v1/webhooks', { url }, idempotencyKey)
    expect(retried.status).toBe(201)
    expect(JSON.parse(retried.text)).toMatchObject({ url })
    const replay = await post(key, '/v1/webhooks', { url }, idempotencyKey)
    expect(replay.text).toBe(retried.text)
  })

  it('API keys: a replay answers the same key without its secret; other input 409; no key creates', async () => {
    const { key } = await seedWorkspace()
    const listed = async () => ((await (await api('/v1/api-keys', { key })).json()) as { keys: unknown[] }).keys.length
    await checkRoute({
      key,
      path: '/v1/api-keys',
      body: { name: 'ci' },
      other: { name: 'cd' },
      expectStatus: 201,
      count: listed,
    })
    const idempotencyKey = crypto.randomUUID()
    const first = await post(key, '/v1/api-keys', { name: 'shown once' }, idempotencyKey)
    const replay = await post(key, '/v1/api-keys', { name: 'shown once' }, idempotencyKey)
    const created = JSON.parse(first.text) as Record<string, unknown>
    expect(created.value).toMatch(/^sk_live_/)
    // The secret is stored only as a hash: the replay is the same key, without `value`.
    const { value: _, ...metadata } = created
    expect(JSON.parse(replay.text)).toEqual(metadata)
    // And the idempotency record itself holds no secret.
    const stored = await env.DB.prepare(
      "SELECT response_body FROM idempotency_keys WHERE scope = 'api-keys' AND key = ?",
    )
      .bind(idempotencyKey)
      .first<{ response_body: string }>()
    expect(stored?.response_body).toBe(JSON.stringify({ id: created.id }))
  })
})
