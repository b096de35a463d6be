/**
 * Multipart bodies are read as a stream (docs/decisions.md, Streamed multipart bodies): an image
 * part over the limit is refused with 413 without being stored or held (the rest of the body is
 * read and dropped, docs/decisions.md "Request bodies: drained refusals"), and a body that
 * breaks off or fails mid-way leaves nothing in R2, charges nothing and creates no job.
 */
import { env } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'
import { api, expectProblem, fixtureBytes, RAW_CUTOUT, seedWorkspace, usage } from './helpers'

const MiB = 1024 * 1024
const BOUNDARY = 'stream-test-boundary'
const encoder = new TextEncoder()

/** A PNG signature and IHDR of a 1000×1000 image: enough for the sniff; the rest may be anything. */
function pngHead(): Uint8Array {
  const bytes = new Uint8Array(33)
  bytes.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52])
  const view = new DataView(bytes.buffer)
  view.setUint32(16, 1000)
  view.setUint32(20, 1000)
  bytes.set([8, 6, 0, 0, 0], 24)
  return bytes
}

const partHead = (name: string, filename?: string) =>
  encoder.encode(
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"${filename ? `; filename="${filename}"` : ''}\r\n` +
      `${filename ? 'Content-Type: image/png\r\n' : ''}\r\n`,
  )

/** The parts before the image: a removal's `options`, then its `image`; a catalog image's `references`. */
const REMOVAL = {
  lead: () => [partHead('options'), encoder.encode(`${JSON.stringify(RAW_CUTOUT)}\r\n`)],
  file: 'image',
}
const CATALOG = { lead: () => [], file: 'references' }

/**
 * A multipart body as a stream, pulled chunk by chunk: `form`'s leading parts, then its file part
 * of a PNG head and `imageMiB` MiB of zeros, then `end`: the closing boundary, an error, or
 * nothing (the body just stops). `pulled` counts the bytes the Worker has taken.
 */
function streamedBody(
  imageMiB: number,
  end: 'close' | 'error-in-image' | 'error-after-image' | 'truncate',
  form = REMOVAL,
) {
  const zeros = new Uint8Array(MiB)
  const chunks: (Uint8Array | Error)[] = [...form.lead(), partHead(form.file, 'photo.png'), pngHead()]
  for (let i = 0; i < imageMiB; i++) {
    if (end === 'error-in-image' && i === imageMiB - 1) chunks.push(new Error('the client went away'))
    chunks.push(zeros)
  }
  if (end === 'close') chunks.push(encoder.encode(`\r\n--${BOUNDARY}--\r\n`))
  // The next part's boundary ends the image part (stored whole), then the body fails or stops.
  if (end === 'error-after-image') chunks.push(encoder.encode(`\r\n--${BOUNDARY}\r\n`), new Error('connection reset'))
  if (end === 'truncate') chunks.push(encoder.encode(`\r\n--${BOUNDARY}\r\nContent-Disposition: form-da`))
  const counter = { pulled: 0 }
  let next = 0
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      const chunk = chunks[next++]
      if (chunk === undefined) controller.close()
      else if (chunk instanceof Error) controller.error(chunk)
      else {
        counter.pulled += chunk.byteLength
        controller.enqueue(chunk)
      }
    },
  })
  return { body, counter, total: chunks.reduce((n, c) => n + (c instanceof Error ? 0 : c.byteLength), 0) }
}

function post(key: string, body: ReadableStream<Uint8Array>, path = '/v1/removals') {
  return api(path, {
    method: 'POST',
    key,
    body,
    headers: {
      'content-type': `multipart/form-data; boundary=${BOUNDARY}`,
      'idempotency-key': crypto.randomUUID(),
      prefer: 'respond-async',
    },
  })
}

async function storedKeys(prefix = 'sources/'): Promise<string[]> {
  const keys: string[] = []
  let cursor: string | undefined
  do {
    const page = await env.BUCKET.list({ prefix, cursor })
    keys.push(...page.objects.map((o) => o.key))
    cursor = page.truncated ? page.cursor : undefined
  } while (cursor)
  return keys
}

async function expectNothingLeft(key: string, workspaceId: string, before: string[]) {
  expect((await storedKeys()).filter((k) => !before.includes(k))).toEqual([])
  expect(await usage(key)).toMatchObject({ held: 0, used: 0 })
  const jobs = await env.DB.prepare('SELECT COUNT(*) AS n FROM jobs WHERE workspace_id = ?').bind(workspaceId).first()
  expect(jobs).toEqual({ n: 0 })
}

describe('streamed multipart bodies', () => {
  it('an image part over 50 MB is 413 image_too_large; nothing of it stays, and the rest of the body is read and dropped', async () => {
    const { key, workspaceId } = await seedWorkspace()
    const before = await storedKeys()
    const { body, counter, total } = streamedBody(80, 'close')
    const res = await post(key, body)
    await expectProblem(res, 413, 'image_too_large', 'image')
    // Drained to its end before the answer (test/worker/request-bodies.test.ts says why), not stored.
    expect(total).toBeGreaterThan(80 * MiB)
    expect(counter.pulled).toBe(total)
    await expectNothingLeft(key, workspaceId, before)
  })

  it('a body that fails mid-image (its R2 multipart upload under way) leaves no object and charges nothing', async () => {
    const { key, workspaceId } = await seedWorkspace()
    const before = await storedKeys()
    // 12 MiB: two 5 MiB parts are uploaded before the body fails.
    const { body } = streamedBody(12, 'error-in-image')
    const res = await post(key, body)
    await expectProblem(res, 400, 'invalid_input')
    await expectNothingLeft(key, workspaceId, before)
  })

  it('a body that fails after a whole image was stored leaves no object: the stored image is deleted', async () => {
    const { key, workspaceId } = await seedWorkspace()
    const before = await storedKeys()
    for (const end of ['error-after-image', 'truncate'] as const) {
      // 6 MiB (one part and a last one: a completed R2 multipart upload), and 1 MiB (one put).
      for (const mib of [6, 1]) {
        const { body } = streamedBody(mib, end)
        const res = await post(key, body)
        const problem = await expectProblem(res, 400, 'invalid_input')
        if (end === 'truncate') expect(problem.detail).toBe('The multipart body ended before its closing boundary')
      }
    }
    await expectNothingLeft(key, workspaceId, before)
  })

  it('an accept refused after its images were stored (no credits; a try-on whose garment is no image) leaves no object', async () => {
    const { key, workspaceId } = await seedWorkspace({ credits: 0 })
    const photo = new File([await fixtureBytes('astronaut.png')], 'astronaut.png', { type: 'image/png' })
    const before = await storedKeys()
    const removal = new FormData()
    removal.set('options', JSON.stringify(RAW_CUTOUT))
    removal.set('image', photo)
    const headers = { 'idempotency-key': crypto.randomUUID() }
    await expectProblem(
      await api('/v1/removals', { method: 'POST', key, body: removal, headers }),
      402,
      'quota_exhausted',
    )
    const tryOn = new FormData()
    tryOn.set('person', photo)
    tryOn.set('garment', new File([new Uint8Array(4096).fill(7)], 'shirt.png', { type: 'image/png' }))
    tryOn.set('options', JSON.stringify({ category: 'upper_body' }))
    const refused = await api('/v1/virtual-try-ons', { method: 'POST', key, body: tryOn, headers })
    await expectProblem(refused, 415, 'unsupported_media', 'garment')
    await expectNothingLeft(key, workspaceId, before)
  })

  it('a replay of the same key and image answers the first job and keeps no second copy; another image is 409', async () => {
    const { key } = await seedWorkspace()
    const photo = await fixtureBytes('astronaut.png')
    const send = (bytes: Uint8Array) => {
      const form = new FormData()
      form.set('options', JSON.stringify(RAW_CUTOUT))
      form.set('image', new File([bytes], 'astronaut.png', { type: 'image/png' }))
      return api('/v1/removals', { method: 'POST', key, body: form, headers: { 'idempotency-key': 'replay' } })
    }
    const before = await storedKeys()
    const first = (await (await send(photo)).json()) as { id: string }
    const replay = await send(photo)
    expect(((await replay.json()) as { id: string }).id).toBe(first.id)
    const other = photo.slice()
    other[other.length - 1] ^= 0xff
    await expectProblem(await send(other), 409, 'idempotency_conflict')
    expect((await storedKeys()).filter((k) => !before.includes(k))).toEqual([`sources/${first.id}`])
    // One job, one credit (held or, once it ended, used).
    const { held, used } = (await usage(key)) as { held: number; used: number }
    expect(held + used).toBe(1)
  })
})

/**
 * Catalog references are staged in R2 as they stream in (they go on to the inference server from
 * there), and only for the call: refused or made, none stays.
 */
describe('streamed catalog references', () => {
  const CATALOG_PATH = '/v1/catalog-images'
  /** Everything under `catalog/` but the made images (`catalog/<id>.png`): the staged references. */
  const stagedKeys = async () => (await storedKeys('catalog/')).filter((k) => !k.endsWith('.png'))

  async function expectNothingStaged(key: string, workspaceId: string) {
    expect(await stagedKeys()).toEqual([])
    expect(await usage(key)).toMatchObject({ held: 0, used: 0 })
    const rows = await env.DB.prepare('SELECT COUNT(*) AS n FROM catalog_images WHERE workspace_id = ?')
      .bind(workspaceId)
      .first()
    expect(rows).toEqual({ n: 0 })
  }

  it('a body cut off after a whole reference was stored leaves nothing in R2 and charges nothing', async () => {
    const { key, workspaceId } = await seedWorkspace()
    for (const end of ['error-after-image', 'truncate'] as const) {
      // 6 MiB (a completed R2 multipart upload), and 1 MiB (one put).
      for (const mib of [6, 1]) {
        const { body } = streamedBody(mib, end, CATALOG)
        await expectProblem(await post(key, body, CATALOG_PATH), 400, 'invalid_input')
      }
    }
    await expectNothingStaged(key, workspaceId)
  })

  it('a whole body refused after its references were stored (a bad option, a reference the server cannot decode) leaves nothing', async () => {
    const { key, workspaceId } = await seedWorkspace()
    const photo = await fixtureBytes('astronaut.png')
    const send = (parts: [string, Blob | string][]) => {
      const form = new FormData()
      for (const [name, value] of parts) form.append(name, value)
      return api(CATALOG_PATH, { method: 'POST', key, body: form })
    }
    const file = (bytes: Uint8Array) => new File([bytes], 'ref.png', { type: 'image/png' })
    await expectProblem(
      await send([
        ['references', file(photo)],
        ['width', '100'],
      ]),
      400,
      'invalid_input',
      'width',
    )
    // Both references are sent to the server from R2 (signed over their stored hashes); it refuses the second.
    const res = await send([
      ['references', file(photo)],
      ['references', file(photo.subarray(0, photo.length / 2))],
    ])
    await expectProblem(res, 400, 'invalid_input', 'references.1')
    expect(await stagedKeys()).toEqual([])
    expect(await usage(key)).toMatchObject({ held: 0, used: 0 })
    const made = await env.DB.prepare(
      "SELECT COUNT(*) AS n FROM catalog_images WHERE workspace_id = ? AND status = 'succeeded'",
    )
      .bind(workspaceId)
      .first()
    expect(made).toEqual({ n: 0 })
  })
  it('a made image leaves its PNG and no staged reference', async () => {
    const { key } = await seedWorkspace()
    const form = new FormData()
    form.append('references', new File([await fixtureBytes('astronaut.png')], 'ref.png', { type: 'image/png' }))
    form.append('width', '256')
    form.append('height', '256')
    const res = await api(CATALOG_PATH, { method: 'POST', key, body: form })
    expect(res.status).toBe(201)
    expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(0)
    const id = res.headers.get('x-catalog-image-id')
    expect(await env.BUCKET.head(`catalog/${id}.png`)).not.toBeNull()
    expect(await stagedKeys()).toEqual([])
    expect(await usage(key)).toMatchObject({ held: 0, used: 1 })
  })
})
