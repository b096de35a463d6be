import { describe, expect, it } from 'vitest'
import { env } from 'cloudflare:test'
import {
  api,
  expectProblem,
  fixtureBytes,
  RAW_CUTOUT,
  removal,
  seedWorkspace,
  settled,
  uploadImage,
  usage,
} from './helpers'

/** A PNG signature and IHDR claiming width×height; the pixels never follow. */
function pngHeader(width: number, height: number): Uint8Array {
  const bytes = new Uint8Array(64)
  bytes.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52])
  const view = new DataView(bytes.buffer)
  view.setUint32(16, width)
  view.setUint32(20, height)
  bytes.set([8, 6, 0, 0, 0], 24)
  return bytes
}

function multipart(key: string, file: File, options: unknown = RAW_CUTOUT, wait?: number) {
  const form = new FormData()
  form.set('image', file)
  form.set('options', JSON.stringify(options))
  const headers: Record<string, string> = { 'idempotency-key': crypto.randomUUID() }
  if (wait) headers.prefer = `wait=${wait}`
  return api('/v1/removals', { method: 'POST', key, body: form, headers })
}

describe('multipart removals', () => {
  it('succeeds for a real photo', async () => {
    const { key } = await seedWorkspace()
    const file = new File([await fixtureBytes('astronaut.png')], 'astronaut.png', { type: 'image/png' })
    const job = await settled(await multipart(key, file, RAW_CUTOUT, 8), { key })
    expect(job).toMatchObject({ status: 'succeeded', result: { contentType: 'image/png' } })
  })

  it('415 for text bytes named .png, with nothing held', async () => {
    const { key } = await seedWorkspace()
    const file = new File(['just some text, not an image'], 'photo.png', { type: 'image/png' })
    await expectProblem(await multipart(key, file), 415, 'unsupported_media', 'image')
    expect(await usage(key)).toMatchObject({ held: 0, used: 0 })
  })

  it('413 for more than 25 megapixels by header', async () => {
    const { key } = await seedWorkspace()
    const file = new File([pngHeader(6000, 5000)], 'huge.png', { type: 'image/png' })
    await expectProblem(await multipart(key, file), 413, 'image_too_large', 'image')
  })

  it('400 for an image under 32×32', async () => {
    const { key } = await seedWorkspace()
    await expectProblem(await multipart(key, new File([pngHeader(16, 16)], 'tiny.png')), 400, 'invalid_input', 'image')
  })

  it('413 for more than 50 MB', async () => {
    const { key } = await seedWorkspace()
    const big = new Uint8Array(50 * 1024 * 1024 + 1)
    big.set(pngHeader(1000, 1000))
    await expectProblem(await multipart(key, new File([big], 'big.png')), 413, 'image_too_large')
  })

  it('a truncated image fails its job with invalid_input within Prefer: wait and releases the hold', async () => {
    const { key } = await seedWorkspace()
    const bytes = await fixtureBytes('astronaut.png')
    const res = await multipart(key, new File([bytes.subarray(0, bytes.length / 3)], 'cut.png'), RAW_CUTOUT, 8)
    // The inference server refuses it while decoding, before any model run: milliseconds of work,
    // so the job ends well within the 8 s even on a slow machine, and the wait answers 200 with it.
    const text = await res.text()
    expect(res.status, text).toBe(200)
    expect(res.headers.get('preference-applied')).toBe('wait=8')
    const job = JSON.parse(text) as { status: string; error: { code: string } }
    expect(job).toMatchObject({ status: 'failed', error: { code: 'invalid_input' } })
    expect(await usage(key)).toMatchObject({ held: 0, used: 0 })
  })
})

describe('uploads', () => {
  it('413 for a PUT over 50 MB or over 25 MP, 415 for text, and complete needs content', async () => {
    const { key } = await seedWorkspace()
    const reserve = async () =>
      (await (await api('/v1/uploads', { method: 'POST', key })).json()) as {
        id: string
        uploadUrl: string
        status: string
      }
    const a = await reserve()
    expect(a.status).toBe('pending')
    expect(a.uploadUrl).toBe(`/v1/uploads/${a.id}/content`)
    await expectProblem(await api(`/v1/uploads/${a.id}/complete`, { method: 'POST', key }), 400, 'invalid_input')
    const big = new Uint8Array(50 * 1024 * 1024 + 1)
    big.set(pngHeader(1000, 1000))
    await expectProblem(
      await api(a.uploadUrl, { method: 'PUT', key, body: big, headers: { 'content-type': 'image/png' } }),
      413,
      'image_too_large',
    )
    const header = pngHeader(6000, 5000)
    await expectProblem(
      await api(a.uploadUrl, { method: 'PUT', key, body: header, headers: { 'content-type': 'image/png' } }),
      413,
      'image_too_large',
    )
    const text = new TextEncoder().encode('hello, I am text pretending to be a PNG')
    await expectProblem(
      await api(a.uploadUrl, { method: 'PUT', key, body: text, headers: { 'content-type': 'image/png' } }),
      415,
      'unsupported_media',
    )
    expect(await env.BUCKET.get(`uploads/${a.id}`)).toBeNull()
  })

  it('complete reports the decoded size and type; a removal needs a ready upload', async () => {
    const { key } = await seedWorkspace()
    const created = (await (await api('/v1/uploads', { method: 'POST', key })).json()) as {
      id: string
      uploadUrl: string
    }
    await expectProblem(
      await removal(key, { uploadId: created.id, options: RAW_CUTOUT }),
      400,
      'invalid_input',
      'uploadId',
    )
    const bytes = await fixtureBytes('astronaut.png')
    expect(
      (await api(created.uploadUrl, { method: 'PUT', key, body: bytes, headers: { 'content-type': 'image/png' } }))
        .status,
    ).toBe(204)
    const done = await api(`/v1/uploads/${created.id}/complete`, { method: 'POST', key })
    expect(done.status).toBe(200)
    expect(await done.json()).toMatchObject({
      id: created.id,
      status: 'ready',
      width: 512,
      height: 512,
      mimeType: 'image/png',
    })
  })

  it('a zero-byte PUT says the body was empty, stores nothing, and the upload stays pending', async () => {
    const { key } = await seedWorkspace()
    const created = (await (await api('/v1/uploads', { method: 'POST', key })).json()) as {
      id: string
      uploadUrl: string
    }
    for (const body of [new Uint8Array(0), undefined]) {
      const res = await api(created.uploadUrl, { method: 'PUT', key, body, headers: { 'content-type': 'image/png' } })
      const problem = await expectProblem(res, 400, 'invalid_input')
      expect(problem.detail).toBe('The request body was empty: expected the image bytes')
      expect(problem.field).toBeUndefined()
    }
    expect(await env.BUCKET.head(`uploads/${created.id}`)).toBeNull()
    // Still pending: the same reservation takes the real bytes afterwards.
    const bytes = await fixtureBytes('astronaut.png')
    expect((await api(created.uploadUrl, { method: 'PUT', key, body: bytes })).status).toBe(204)
  })

  it('a truncated upload is refused at complete', async () => {
    const { key } = await seedWorkspace()
    const created = (await (await api('/v1/uploads', { method: 'POST', key })).json()) as {
      id: string
      uploadUrl: string
    }
    const bytes = (await fixtureBytes('astronaut.png')).subarray(0, 300_000)
    expect((await api(created.uploadUrl, { method: 'PUT', key, body: bytes })).status).toBe(204)
    await expectProblem(await api(`/v1/uploads/${created.id}/complete`, { method: 'POST', key }), 400, 'invalid_input')
  })
})

describe('sourceUrl', () => {
  it('fetches an allow-listed local server and succeeds', async () => {
    const { key } = await seedWorkspace()
    const res = await removal(
      key,
      { sourceUrl: `${env.FIXTURE_ORIGIN}/files/astronaut.png`, options: RAW_CUTOUT },
      { wait: 8 },
    )
    expect(await settled(res, { key })).toMatchObject({ status: 'succeeded' })
  })

  it('422 unsafe_url for private targets in any spelling, and for a redirect to one', async () => {
    const { key } = await seedWorkspace()
    const unsafe = [
      'http://169.254.169.254/latest/meta-data/',
      'http://[::ffff:127.0.0.1]/a.png',
      'http://2130706433/a.png',
      'http://0177.0.0.1/a.png',
      'http://127.0.0.1/a.png',
      'http://[::1]:8080/a.png',
      'http://user:pass@example.com/a.png',
      'http://mixed.test/a.png',
      'http://metadata.test/a.png',
      `${env.FIXTURE_ORIGIN}/redirect?to=${encodeURIComponent('http://10.0.0.1/a.png')}`,
      `${env.FIXTURE_ORIGIN}/redirect?to=${encodeURIComponent('http://169.254.169.254/')}`,
    ]
    for (const sourceUrl of unsafe) {
      await expectProblem(await removal(key, { sourceUrl, options: RAW_CUTOUT }), 422, 'unsafe_url', 'sourceUrl')
    }
    expect(await usage(key)).toMatchObject({ held: 0, used: 0 })
  })

  // SOURCE_FETCH_TIMEOUT_MS is 1000 in the Worker tests (production: 10 s, src/contract/limits.ts).
  it('a source that never answers is 400 naming sourceUrl after the bound, in plain words, nothing held', async () => {
    const { key } = await seedWorkspace()
    const started = Date.now()
    const res = await removal(
      key,
      { sourceUrl: `${env.FIXTURE_ORIGIN}/never-answers`, options: RAW_CUTOUT },
      { wait: 8 },
    )
    const elapsed = Date.now() - started
    const problem = await expectProblem(res, 400, 'invalid_input', 'sourceUrl')
    expect(problem.detail).toBe('sourceUrl did not answer within 1 s')
    expect(elapsed).toBeGreaterThanOrEqual(1000)
    expect(elapsed).toBeLessThan(8000)
    expect(await usage(key)).toMatchObject({ held: 0, used: 0 })
  })

  it('the same bound holds after a redirect and for a try-on image, naming its member', async () => {
    const { key } = await seedWorkspace()
    const never = `${env.FIXTURE_ORIGIN}/never-answers`
    const redirected = `${env.FIXTURE_ORIGIN}/redirect?to=${encodeURIComponent(never)}`
    const problem = await expectProblem(
      await removal(key, { sourceUrl: redirected, options: RAW_CUTOUT }),
      400,
      'invalid_input',
      'sourceUrl',
    )
    expect(problem.detail).toBe('sourceUrl did not answer within 1 s')
    const upload = await uploadImage(key, await fixtureBytes('astronaut.png'))
    const body = {
      person: { uploadId: upload.id },
      garment: { sourceUrl: never },
      options: { category: 'upper_body' },
    }
    const headers = { 'idempotency-key': crypto.randomUUID() }
    const res = await api('/v1/virtual-try-ons', { method: 'POST', key, json: body, headers })
    const tryOn = await expectProblem(res, 400, 'invalid_input', 'garment.sourceUrl')
    expect(tryOn.detail).toBe('garment.sourceUrl did not answer within 1 s')
    expect(await usage(key)).toMatchObject({ held: 0, used: 0 })
  })

  it('400 for a non-http scheme and 415 for text behind the URL', async () => {
    const { key } = await seedWorkspace()
    await expectProblem(
      await removal(key, { sourceUrl: 'file:///etc/passwd', options: RAW_CUTOUT }),
      400,
      'invalid_input',
      'sourceUrl',
    )
    await expectProblem(
      await removal(key, { sourceUrl: `${env.FIXTURE_ORIGIN}/text.png`, options: RAW_CUTOUT }),
      415,
      'unsupported_media',
      'sourceUrl',
    )
  })
})
