/**
 * Small HTTP-contract promises: ids in any case, the upload PUT's Content-Type, and 405 with
 * `Allow` for a known path asked with another method. None needs a model run.
 */
import { env } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'
import { api, expectProblem, fixtureBytes, RAW_CUTOUT, removal, seedWorkspace } from './helpers'
import { storedResult } from './stored-results'

const reserveUpload = async (key: string) =>
  (await (await api('/v1/uploads', { method: 'POST', key })).json()) as { id: string; uploadUrl: string }

describe('UUIDs are case-insensitive (normalised to lower case by the schemas)', () => {
  it('an upper-case id finds the upload, in the path and in a body field', async () => {
    const { key } = await seedWorkspace()
    const pending = await reserveUpload(key)
    const UPPER = pending.id.toUpperCase()
    // A pending upload named in upper case is found (not "No upload … in this workspace").
    const notReady = `Upload ${pending.id} is not ready; complete it first`
    const single = await expectProblem(
      await removal(key, { uploadId: UPPER, options: RAW_CUTOUT }),
      400,
      'invalid_input',
      'uploadId',
    )
    expect(single.detail).toBe(notReady)
    const batch = await api('/v1/batches', {
      method: 'POST',
      key,
      headers: { 'idempotency-key': crypto.randomUUID() },
      json: { uploadIds: [UPPER], options: RAW_CUTOUT },
    })
    expect((await expectProblem(batch, 400, 'invalid_input', 'uploadIds.0')).detail).toBe(notReady)
    const tryOn = await api('/v1/virtual-try-ons', {
      method: 'POST',
      key,
      headers: { 'idempotency-key': crypto.randomUUID() },
      json: { person: { uploadId: UPPER }, garment: { uploadId: UPPER }, options: { category: 'upper_body' } },
    })
    expect((await expectProblem(tryOn, 400, 'invalid_input')).detail).toMatch(/is not ready; complete it first$/)

    const bytes = await fixtureBytes('astronaut.png')
    const put = await api(`/v1/uploads/${UPPER}/content`, {
      method: 'PUT',
      key,
      body: bytes,
      headers: { 'content-type': 'image/png' },
    })
    expect(put.status).toBe(204)
    const done = await api(`/v1/uploads/${UPPER}/complete`, { method: 'POST', key })
    expect(done.status).toBe(200)
    expect(((await done.json()) as { id: string; status: string }).id).toBe(pending.id)
  })

  it('an upper-case job id, batchId filter and export id find them', async () => {
    const { key, workspaceId } = await seedWorkspace()
    const batchId = crypto.randomUUID()
    const job = await storedResult(workspaceId, 'remove_background', batchId)
    const read = await api(`/v1/jobs/${job.id.toUpperCase()}`, { key })
    expect(read.status).toBe(200)
    expect(((await read.json()) as { id: string }).id).toBe(job.id)
    const result = await api(`/v1/jobs/${job.id.toUpperCase()}/result`, { key })
    expect(new Uint8Array(await result.arrayBuffer())).toEqual(job.bytes)
    const listed = (await (await api(`/v1/jobs?batchId=${batchId.toUpperCase()}`, { key })).json()) as {
      jobs: { id: string }[]
    }
    expect(listed.jobs.map((j) => j.id)).toEqual([job.id])
    // A project's export result too (project and export ids upper-cased), with the owner's key.
    const exported = await storedResult(workspaceId, 'export')
    const upperIds = exported.path.replace(/[0-9a-f]{8}-[0-9a-f-]{27}/g, (uuid) => uuid.toUpperCase())
    expect(upperIds).not.toBe(exported.path)
    const exportBytes = await api(upperIds, { key })
    expect(exportBytes.status).toBe(200)
    expect(new Uint8Array(await exportBytes.arrayBuffer())).toEqual(exported.bytes)
    // Another workspace still cannot see it, in any case.
    const other = await seedWorkspace()
    await expectProblem(await api(`/v1/jobs/${job.id.toUpperCase()}`, { key: other.key }), 404, 'job_not_found')
  })
})

describe('PUT /v1/uploads/{id}/content takes octet-stream or an image type', () => {
  it('415 unsupported_media for text/plain (field Content-Type), storing nothing; the upload stays usable', async () => {
    const { key } = await seedWorkspace()
    const upload = await reserveUpload(key)
    const bytes = await fixtureBytes('astronaut.png')
    for (const type of ['text/plain', 'application/json', 'multipart/form-data; boundary=x']) {
      const res = await api(upload.uploadUrl, { method: 'PUT', key, body: bytes, headers: { 'content-type': type } })
      const problem = await expectProblem(res, 415, 'unsupported_media', 'Content-Type')
      expect(problem.detail).toBe(
        `Expected Content-Type application/octet-stream, image/jpeg, image/png, image/webp, image/avif, image/heic, image/heif but received ${type.split(';')[0]}`,
      )
    }
    expect(await env.BUCKET.head(`uploads/${upload.id}`)).toBeNull()
    // Another workspace's id is still refused the same way first: the type is checked before the lookup.
    await expectProblem(
      await api(`/v1/uploads/${crypto.randomUUID()}/content`, {
        method: 'PUT',
        key,
        body: bytes,
        headers: { 'content-type': 'text/plain' },
      }),
      415,
      'unsupported_media',
    )
    for (const type of ['application/octet-stream', 'IMAGE/PNG; charset=binary']) {
      const fresh = await reserveUpload(key)
      const res = await api(fresh.uploadUrl, { method: 'PUT', key, body: bytes, headers: { 'content-type': type } })
      expect(res.status, type).toBe(204)
    }
    // The refused reservation takes the bytes afterwards.
    const ok = await api(upload.uploadUrl, {
      method: 'PUT',
      key,
      body: bytes,
      headers: { 'content-type': 'image/png' },
    })
    expect(ok.status).toBe(204)
  })
})

describe('405 method_not_allowed with Allow', () => {
  it('a known path with another method is 405 listing its methods; an unknown path stays 404', async () => {
    const { key } = await seedWorkspace()
    const id = crypto.randomUUID()
    const cases: [string, string, string][] = [
      ['PATCH', `/v1/jobs/${id}`, 'GET, HEAD, DELETE'],
      ['POST', `/v1/jobs/${id}/result`, 'GET, HEAD'],
      ['PUT', '/v1/api-keys', 'GET, HEAD, POST'],
      ['GET', '/v1/removals', 'POST'],
      ['DELETE', `/v1/uploads/${id}/content`, 'PUT'],
      ['POST', '/health/live', 'GET, HEAD'],
    ]
    for (const [method, path, allow] of cases) {
      const res = await api(path, { method, key })
      expect(res.headers.get('allow'), `${method} ${path}`).toBe(allow)
      const problem = await expectProblem(res, 405, 'method_not_allowed')
      expect(problem.detail).toBe(`Expected ${allow} for ${path} but received ${method}`)
    }
    // Without a credential too: the method is wrong whoever asks.
    expect((await api('/v1/api-keys', { method: 'PUT' })).status).toBe(405)
    await expectProblem(await api('/v1/nothing-here', { method: 'PATCH', key }), 404, 'route_not_found')
    await expectProblem(await api(`/v1/jobs/${id}/nothing`, { key }), 404, 'route_not_found')
  })
})
