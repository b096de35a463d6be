/**
 * `POST /mcp` in workerd (DESIGN.md §3 MCP), spoken as raw JSON-RPC so the wire is what is checked:
 * the credential as on REST (401 `invalid_api_key` problem without one, the app's rate-limit
 * headers on every answer), each tool's REST scopes, arguments checked by the REST schemas with
 * REST's wording, and refusals as MCP tool errors carrying the problem. The whole removal, with
 * its PNG, is run by an MCP client against the real stack (test/mcp/mcp.test.ts).
 */
import { env } from 'cloudflare:workers'
import { afterEach, describe, expect, it } from 'vitest'
import { type LogLevel, logSink } from '../../src/lib/log'
import { api, expectProblem, fixtureBytes, RAW_CUTOUT, seedWorkspace, sleep, testBudget, uploadImage } from './helpers'

const originalSink = { ...logSink }
afterEach(() => Object.assign(logSink, originalSink))

const ACCEPT = 'application/json, text/event-stream'

/** One JSON-RPC request to /mcp (stateless: no initialize needed first). */
async function rpc(method: string, params: unknown, key?: string): Promise<Response> {
  return api('/mcp', {
    method: 'POST',
    key,
    headers: { accept: ACCEPT, 'mcp-protocol-version': '2025-06-18' },
    json: { jsonrpc: '2.0', id: 1, method, params },
  })
}

type ToolResult = {
  isError?: boolean
  content: { type: string; text?: string; data?: string; mimeType?: string; uri?: string }[]
  structuredContent?: Record<string, any>
}

async function callTool(name: string, args: unknown, key: string): Promise<ToolResult> {
  const res = await rpc('tools/call', { name, arguments: args }, key)
  expect(res.status).toBe(200)
  const body = (await res.json()) as { result: ToolResult }
  return body.result
}

/** A tool error carries the REST problem: `code: detail` as text, and the problem as structuredContent. */
function expectToolProblem(result: ToolResult, code: string, field?: string) {
  expect(result.isError, JSON.stringify(result)).toBe(true)
  const problem = result.structuredContent as { code: string; detail: string; field?: string; type: string }
  expect(problem.code).toBe(code)
  if (field) expect(problem.field).toBe(field)
  expect(result.content[0].text).toBe(`${code}: ${problem.detail}`)
  expect(problem.type).toBe(`https://api.test/errors/${code.replaceAll('_', '-')}`)
  return problem
}

describe('POST /mcp', () => {
  it('is 401 invalid_api_key (problem+json) without a credential, and with a revoked-looking key', async () => {
    await expectProblem(await rpc('tools/list', {}), 401, 'invalid_api_key')
    await expectProblem(await rpc('tools/list', {}, 'sk_live_not-a-key'), 401, 'invalid_api_key')
  })

  it('answers initialize and lists the eight tools with JSON Schemas from the REST contract', async () => {
    const { key } = await seedWorkspace()
    const init = await rpc(
      'initialize',
      { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1' } },
      key,
    )
    expect(init.status).toBe(200)
    const { result } = (await init.json()) as { result: { serverInfo: { name: string }; capabilities: object } }
    expect(result.serverInfo.name).toBe('cutout')
    expect(result.capabilities).toHaveProperty('tools')

    const listed = await rpc('tools/list', {}, key)
    const { tools } = ((await listed.json()) as { result: { tools: { name: string; inputSchema: any }[] } }).result
    expect(tools.map((t) => t.name).sort()).toEqual([
      'cancel_job',
      'create_catalog_image',
      'create_upload',
      'get_job',
      'get_usage',
      'list_jobs',
      'remove_background',
      'try_on',
    ])
    const remove = tools.find((t) => t.name === 'remove_background')!.inputSchema
    expect(remove.type).toBe('object')
    // REST's body schema: every option has its default, so none is required (the source is one of two).
    expect(remove.required ?? []).toEqual([])
    expect(remove.properties.options.properties.quality).toMatchObject({
      enum: ['fast', 'balanced', 'high'],
      default: 'balanced',
    })
    expect(Object.keys(remove.properties).sort()).toEqual(['idempotencyKey', 'options', 'sourceUrl', 'uploadId'])
  })

  it('GET and DELETE are 405 with Allow: POST (a stateless server has no SSE stream or session)', async () => {
    const { key } = await seedWorkspace()
    for (const method of ['GET', 'DELETE']) {
      const res = await api('/mcp', { method, key, headers: { accept: ACCEPT } })
      await expectProblem(res, 405, 'method_not_allowed')
      expect(res.headers.get('allow')).toBe('POST')
    }
  })

  it('refuses a JSON-RPC batch (400 invalid_input: each call is a request) and answers bad JSON with a parse error', async () => {
    const { key } = await seedWorkspace()
    const call = { jsonrpc: '2.0', method: 'tools/call', params: { name: 'get_usage', arguments: {} } }
    const headers = { accept: ACCEPT, 'mcp-protocol-version': '2025-06-18' }
    const batch = await api('/mcp', { method: 'POST', key, headers, json: [1, 2].map((id) => ({ ...call, id })) })
    expect((await expectProblem(batch, 400, 'invalid_input')).detail).toMatch(/not a batch/)
    const garbled = await api('/mcp', {
      method: 'POST',
      key,
      headers: { ...headers, 'content-type': 'application/json' },
      body: '{"jsonrpc": "2.0", ',
    })
    expect(garbled.status).toBe(400)
    expect(await garbled.json()).toMatchObject({ error: { code: -32700 } })
  })

  it("checks each tool's REST scopes: a key without images:write reads usage but may not remove", async () => {
    const { key } = await seedWorkspace({ scopes: ['jobs:read'] })
    const usage = await callTool('get_usage', {}, key)
    expect(usage.isError).toBeFalsy()
    expect(usage.structuredContent).toMatchObject({ available: 100, held: 0 })
    const refused = await callTool(
      'remove_background',
      { sourceUrl: 'https://images.example.com/a.png', options: RAW_CUTOUT },
      key,
    )
    expect(expectToolProblem(refused, 'insufficient_scope').detail).toContain('images:write')
    expectToolProblem(await callTool('create_upload', {}, key), 'insufficient_scope')
  })

  it('refuses arguments as REST does: invalid_input naming the field, and exactly one source', async () => {
    const { key } = await seedWorkspace()
    const unknown = await callTool(
      'remove_background',
      { sourceUrl: 'https://images.example.com/a.png', options: { ...RAW_CUTOUT, sharpen: true } },
      key,
    )
    expectToolProblem(unknown, 'invalid_input', 'options.sharpen')
    const both = await callTool(
      'remove_background',
      { sourceUrl: 'https://images.example.com/a.png', uploadId: crypto.randomUUID(), options: RAW_CUTOUT },
      key,
    )
    expectToolProblem(both, 'invalid_input', 'uploadId')
    expectToolProblem(await callTool('get_job', { id: 'nope' }, key), 'invalid_input', 'id')
  })

  it('answers a malformed tools/call with -32602 Invalid params naming the field, as REST would', async () => {
    const { key } = await seedWorkspace()
    const cases: [unknown, string, RegExp][] = [
      [undefined, 'params', /expected object, received undefined for params$/],
      [
        { name: 'list_jobs', arguments: 'all' },
        'params.arguments',
        /expected record, received string for params\.arguments$/,
      ],
      [{ name: 'list_jobs', arguments: [1] }, 'params.arguments', /received array for params\.arguments$/],
      [{ arguments: {} }, 'params.name', /expected string, received undefined for params\.name$/],
    ]
    for (const [params, field, detail] of cases) {
      const res = await rpc('tools/call', params, key)
      const { error } = (await res.json()) as {
        error: { code: number; message: string; data: Record<string, unknown> }
      }
      expect(error.code, JSON.stringify(error)).toBe(-32602)
      expect(error.message).toMatch(detail)
      expect(error.data).toMatchObject({ code: 'invalid_input', status: 400, field })
    }
    const other = (await (await rpc('resources/list', {}, key)).json()) as { error: { code: number } }
    expect(other.error.code).toBe(-32601) // Method not found, as before
  })

  it("refuses arguments a tool does not take, as the REST contract's strict objects do, and lists them as strict", async () => {
    const { key } = await seedWorkspace()
    const unknown = expectToolProblem(await callTool('list_jobs', { foo: 1 }, key), 'invalid_input', 'foo')
    expect(unknown.detail).toBe('Unknown field foo: options are strict')
    const id = crypto.randomUUID()
    expectToolProblem(await callTool('get_job', { id, verbose: true }, key), 'invalid_input', 'verbose')
    expectToolProblem(await callTool('cancel_job', { id, reason: 'x' }, key), 'invalid_input', 'reason')
    const listed = await rpc('tools/list', {}, key)
    const { tools } = ((await listed.json()) as { result: { tools: { name: string; inputSchema: any }[] } }).result
    for (const tool of tools) expect(tool.inputSchema.additionalProperties, tool.name).toBe(false)
  })

  it("answers the services' problems: an unknown job is job_not_found, an unknown upload names uploadId", async () => {
    const { key } = await seedWorkspace()
    expectToolProblem(await callTool('get_job', { id: crypto.randomUUID() }, key), 'job_not_found')
    const missing = await callTool('remove_background', { uploadId: crypto.randomUUID(), options: RAW_CUTOUT }, key)
    expectToolProblem(missing, 'invalid_input', 'uploadId')
    expect((await callTool('get_usage', {}, key)).structuredContent).toMatchObject({ held: 0, used: 0 })
  })

  it('create_upload answers an absolute uploadUrl that takes the PUT with the same credential', async () => {
    const { key } = await seedWorkspace()
    const created = await callTool('create_upload', { contentType: 'image/png' }, key)
    const upload = created.structuredContent as { id: string; uploadUrl: string; status: string }
    expect(upload.status).toBe('pending')
    expect(upload.uploadUrl).toBe(`https://api.test/v1/uploads/${upload.id}/content`)
    expect(created.content[0].text).toContain('Authorization: Bearer')
  })

  it(
    'answers a finished removal with its PNG as image content and the absolute signed URL; a key replays the job',
    async () => {
      const { key } = await seedWorkspace()
      const lines: string[] = []
      logSink.write = (_level: LogLevel, line: string) => void lines.push(line)
      const args = {
        sourceUrl: `${env.FIXTURE_ORIGIN}/files/astronaut.png`,
        options: RAW_CUTOUT,
        idempotencyKey: crypto.randomUUID(),
      }
      const result = await finished(await callTool('remove_background', args, key), key)
      const job = result.structuredContent as { id: string; status: string; result: { url: string } }
      expect(job.status).toBe('succeeded')
      expect(job.result.url).toMatch(new RegExp(`^https://api\\.test/v1/jobs/${job.id}/result\\?exp=\\d+&sig=`))
      const image = result.content.find((c) => c.type === 'image')!
      expect(image.mimeType).toBe('image/png')
      const png = Uint8Array.from(atob(image.data!), (ch) => ch.charCodeAt(0))
      const fetched = await api(job.result.url) // signed: no credential
      expect(fetched.status).toBe(200)
      expect(new Uint8Array(await fetched.arrayBuffer())).toEqual(png)
      expect(result.content.find((c) => c.type === 'resource_link')?.uri).toBe(job.result.url)

      const replay = await callTool('remove_background', args, key)
      expect(replay.structuredContent?.id).toBe(job.id)
      // The options left out are REST's defaults (a raw cutout): the same request to the key.
      const { options: _defaults, ...withoutOptions } = args
      expect((await callTool('remove_background', withoutOptions, key)).structuredContent?.id).toBe(job.id)
      expect((await callTool('get_usage', {}, key)).structuredContent).toMatchObject({ used: 1, held: 0 })
      const tools = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'mcp tool')
      expect(tools[0]).toMatchObject({ tool: 'remove_background', outcome: 'ok' })
    },
    testBudget(1),
  )

  it(
    'tries a garment on from two URLs: the job with its notices and PNG; an upload id works as REST’s does',
    async () => {
      const { key } = await seedWorkspace()
      const args = {
        person: { sourceUrl: `${env.FIXTURE_ORIGIN}/files/astronaut.png` },
        garment: { sourceUrl: `${env.FIXTURE_ORIGIN}/files/garment-shirt.png` },
        options: { category: 'upper_body', seed: 7 },
      }
      const result = await finished(await callTool('try_on', args, key), key)
      expect(result.isError, JSON.stringify(result.content[0])).toBeFalsy()
      const job = result.structuredContent as { kind: string; status: string; warnings: { code: string }[] }
      expect(job).toMatchObject({ kind: 'virtual_try_on', status: 'succeeded' })
      expect(job.warnings.map((w) => w.code)).toContain('experimental_non_commercial')
      expect(result.content.find((c) => c.type === 'image')?.mimeType).toBe('image/png')
      const upload = await uploadImage(key, await fixtureBytes('astronaut.png'))
      const missing = await callTool('try_on', { ...args, person: { uploadId: crypto.randomUUID() } }, key)
      expectToolProblem(missing, 'invalid_input', 'person.uploadId')
      const fromUpload = await finished(
        await callTool('try_on', { ...args, person: { uploadId: upload.id } }, key),
        key,
      )
      expect(fromUpload.structuredContent).toMatchObject({ kind: 'virtual_try_on', status: 'succeeded' })
      expect((await callTool('get_usage', {}, key)).structuredContent).toMatchObject({ used: 2, held: 0 })
    },
    testBudget(3),
  )

  it(
    'makes a catalog image from upload ids: the PNG as image content and its seed; a key replays it',
    async () => {
      const { key } = await seedWorkspace()
      const upload = await uploadImage(key, await fixtureBytes('coffee.png'))
      const args = { references: [upload.id], width: 256, height: 256, idempotencyKey: crypto.randomUUID() }
      const made = await callTool('create_catalog_image', args, key)
      expect(made.isError, JSON.stringify(made.content[0])).toBeFalsy()
      const view = made.structuredContent as { id: string; seed: number; width: number; links: { self: string } }
      expect(view).toMatchObject({
        width: 256,
        height: 256,
        links: { self: `https://api.test/v1/catalog-images/${view.id}` },
      })
      const image = made.content.find((c) => c.type === 'image')!
      const stored = await api(view.links.self, { key })
      expect(new Uint8Array(await stored.arrayBuffer())).toEqual(
        Uint8Array.from(atob(image.data!), (ch) => ch.charCodeAt(0)),
      )
      expect(stored.headers.get('x-generation-seed')).toBe(String(view.seed))
      const replay = await callTool('create_catalog_image', args, key)
      expect(replay.structuredContent).toMatchObject({ id: view.id, seed: view.seed })
      expect((await callTool('get_usage', {}, key)).structuredContent).toMatchObject({ used: 1, held: 0 })
      const missing = await callTool('create_catalog_image', { references: [upload.id, crypto.randomUUID()] }, key)
      expectToolProblem(missing, 'invalid_input', 'references.1')
    },
    testBudget(1),
  )

  it(
    'leaves a result over 1 MB out of the answer: the signed URL only',
    async () => {
      const { key } = await seedWorkspace()
      // Noise does not compress: its cutout (RGBA, noisy alpha) is about 1.5 MB as PNG.
      const upload = await uploadImage(key, await noisePng(640, 640))
      const args = { uploadId: upload.id, options: RAW_CUTOUT }
      const result = await finished(await callTool('remove_background', args, key), key)
      expect(result.structuredContent?.status).toBe('succeeded')
      expect(result.content.map((c) => c.type)).toEqual(['text', 'text', 'resource_link'])
      const fetched = await api(result.structuredContent?.result.url)
      expect(Number(fetched.headers.get('content-length'))).toBeGreaterThan(1024 * 1024)
      await fetched.body?.cancel()
    },
    testBudget(1),
  )
})

/** A removal's answer, followed with get_job until the job ends. */
async function finished(first: ToolResult, key: string): Promise<ToolResult> {
  let result = first
  for (;;) {
    expect(result.isError, JSON.stringify(result.content[0])).toBeFalsy()
    const { id, status } = result.structuredContent as { id: string; status: string }
    if (status !== 'queued' && status !== 'processing') return result
    await sleep(250)
    result = await callTool('get_job', { id }, key)
  }
}

/** An RGB PNG of random pixels (zlib by CompressionStream, CRCs computed, as a decoder checks them). */
async function noisePng(width: number, height: number): Promise<Uint8Array> {
  const raw = new Uint8Array((width * 3 + 1) * height)
  for (let i = 0; i < raw.length; i += 65536) crypto.getRandomValues(raw.subarray(i, i + 65536))
  for (let y = 0; y < height; y++) raw[y * (width * 3 + 1)] = 0 // filter: none
  const zlib = new Blob([raw]).stream().pipeThrough(new CompressionStream('deflate'))
  const idat = new Uint8Array(await new Response(zlib).arrayBuffer())
  const header = new Uint8Array(13)
  new DataView(header.buffer).setUint32(0, width)
  new DataView(header.buffer).setUint32(4, height)
  header.set([8, 2, 0, 0, 0], 8)
  const signature = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])
  const parts = [signature, chunk('IHDR', header), chunk('IDAT', idat), chunk('IEND', new Uint8Array())]
  return new Uint8Array(await new Blob(parts).arrayBuffer())
}

function chunk(type: string, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + data.length)
  const view = new DataView(out.buffer)
  view.setUint32(0, data.length)
  out.set(new TextEncoder().encode(type), 4)
  out.set(data, 8)
  view.setUint32(8 + data.length, crc32(out.subarray(4, 8 + data.length)))
  return out
}

function crc32(bytes: Uint8Array): number {
  let crc = 0xffffffff
  for (const byte of bytes) {
    crc ^= byte
    for (let k = 0; k < 8; k++) crc = crc & 1 ? (crc >>> 1) ^ 0xedb88320 : crc >>> 1
  }
  return (crc ^ 0xffffffff) >>> 0
}
