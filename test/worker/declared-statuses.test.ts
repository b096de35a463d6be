/**
 * Each operation answers only statuses /openapi.json lists for it (issue 46 item 5): every
 * operation of the document is sent the requests its declaration says it refuses (a bad
 * credential, a key without scopes, an unknown id, a body of the wrong type, too large, or
 * malformed), and must answer the status its declaration implies (src/schemas/problems.ts). Every
 * answer, here and in every other worker test, passes `assertDeclaredStatus` (./declared-statuses.ts,
 * called by `api()`), which fails when a status is missing from the operation's responses.
 */
import { exports } from 'cloudflare:workers'
import { describe, expect, it } from 'vitest'
import { SPECIAL_ROUTES } from '../../src/services/access'
import { assertDeclaredStatus } from './declared-statuses'
import { api, type ApiInit, BASE, seedWorkspace } from './helpers'

type Operation = {
  operationId: string
  security?: Record<string, string[]>[]
  requestBody?: { content: Record<string, unknown> }
  responses: Record<string, unknown>
}
interface Listed {
  method: string
  path: string
  op: Operation
}

const UNKNOWN = '00000000-0000-4000-8000-000000000000'
/** A well-formed user code no device authorization has. */
const UNKNOWN_USER_CODE = 'BCDF-GHJK'
/** Over the 1 MiB JSON limit (MAX_JSON_BODY_BYTES). */
const OVERSIZED = 1024 * 1024 + 1

async function listed(): Promise<Listed[]> {
  const res = await exports.default.fetch(new Request(new URL('/openapi.json', BASE)))
  const doc = (await res.json()) as { paths: Record<string, Record<string, Operation>> }
  return Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => ({ method: method.toUpperCase(), path, op })),
  )
}

/** The path with each parameter filled by a value no resource has. */
const unknownPath = (path: string) =>
  path.replace(/\{(\w+)\}/g, (_, name: string) => (name === 'userCode' ? UNKNOWN_USER_CODE : UNKNOWN))

const needsCredential = (op: Operation) => (op.security ?? []).some((r) => Object.keys(r).length > 0)
const lists = (op: Operation, status: number) => String(status) in op.responses
/** Routes that want a signed-in session (an API key is 403 before anything else is looked at). */
const sessionOnly = ({ method, path }: Listed) => (SPECIAL_ROUTES as readonly string[]).includes(`${method} ${path}`)

/** Sends `init` to every operation `which` picks; returns `[operationId, status]` of each answer. */
async function sendEach(
  operations: Listed[],
  which: (l: Listed) => boolean,
  init: (l: Listed) => ApiInit,
): Promise<[string, number][]> {
  const answers: [string, number][] = []
  for (const l of operations.filter(which)) {
    const res = await api(unknownPath(l.path), { method: l.method, ...init(l) })
    await res.body?.cancel()
    answers.push([l.op.operationId, res.status])
  }
  return answers
}

/** `answers` with every status replaced by whether it is `expected`, for a readable failure. */
const refusedWith = (answers: [string, number][], expected: number) =>
  answers.filter(([, status]) => status !== expected).map(([id, status]) => `${id} → ${status}`)

describe('every operation answers the statuses its declaration lists', () => {
  it('a bad credential is 401 wherever the operation names one', async () => {
    const operations = await listed()
    const answers = await sendEach(
      operations,
      (l) => needsCredential(l.op),
      () => ({ headers: { authorization: `Bearer sk_live_${'0'.repeat(43)}` } }),
    )
    expect(answers.length).toBeGreaterThan(30)
    expect(refusedWith(answers, 401)).toEqual([])
  })

  it('a key without scopes is 403 wherever the operation lists it', async () => {
    const { key } = await seedWorkspace({ scopes: [] })
    const operations = await listed()
    const answers = await sendEach(
      operations,
      (l) => lists(l.op, 403),
      () => ({ key }),
    )
    expect(answers.length).toBeGreaterThan(30)
    expect(refusedWith(answers, 403)).toEqual([])
  })

  it('an unknown id is 404 wherever the path names a resource (and no body comes first)', async () => {
    const { key } = await seedWorkspace()
    const operations = await listed()
    const answers = await sendEach(
      operations,
      (l) => l.path.includes('{') && !l.op.requestBody && !sessionOnly(l),
      () => ({ key }),
    )
    expect(answers.length).toBeGreaterThan(15)
    expect(refusedWith(answers, 404)).toEqual([])
  })

  it('a body of another type is 415, one over 1 MiB 413, malformed JSON 400', async () => {
    const { key } = await seedWorkspace()
    const operations = await listed()
    const takesBody = (l: Listed) => l.op.requestBody !== undefined && !sessionOnly(l)
    const takesJson = (l: Listed) => takesBody(l) && 'application/json' in (l.op.requestBody?.content ?? {})
    const headers = { 'idempotency-key': crypto.randomUUID() }
    const wrongType = await sendEach(operations, takesBody, () => ({
      key,
      body: 'not an image, not JSON',
      headers: { ...headers, 'content-type': 'text/plain' },
    }))
    const tooLarge = await sendEach(operations, takesJson, () => ({
      key,
      body: new Uint8Array(OVERSIZED).fill(0x20),
      headers: { ...headers, 'content-type': 'application/json' },
    }))
    const malformed = await sendEach(operations, takesJson, () => ({
      key,
      body: '{"unterminated',
      headers: { ...headers, 'content-type': 'application/json' },
    }))
    expect(wrongType.length).toBeGreaterThan(15)
    expect(refusedWith(wrongType, 415)).toEqual([])
    expect(refusedWith(tooLarge, 413)).toEqual([])
    expect(refusedWith(malformed, 400)).toEqual([])
  })

  it('an answer whose status the operation does not list fails the check', async () => {
    const teapot = new Response('{}', { status: 418 })
    await expect(assertDeclaredStatus('GET', new URL('/v1/usage', BASE), teapot)).rejects.toThrow(
      /GET \/v1\/usage answered 418, which its declaration omits/,
    )
    // Statuses the operation lists pass; paths outside the document are not judged.
    const ok = new Response('{}', { status: 401 })
    await expect(assertDeclaredStatus('GET', new URL('/v1/usage', BASE), ok)).resolves.toBe(ok)
    const elsewhere = new Response('{}', { status: 418 })
    await expect(assertDeclaredStatus('GET', new URL('/v1/nowhere', BASE), elsewhere)).resolves.toBe(elsewhere)
  })
})
