/**
 * Holds every answer of the worker tests to /openapi.json (issue 46 item 5): an operation's status
 * must be one its declaration lists (src/schemas/problems.ts says which it implies). `api()`
 * (./helpers.ts) passes each answer here, so every error path any worker test walks checks the
 * document too; a route that starts answering a status its declaration omits fails the test that
 * reaches it, naming the operation and the status. Requests the document does not describe (a
 * path no operation has, another method: 404/405 by the app's own rule; /mcp) are left alone.
 */
import { exports } from 'cloudflare:workers'

interface DeclaredOperation {
  method: string
  template: string
  pattern: RegExp
  /** Path parameters: the fewer, the more specific (`/token` before `/{userCode}`). */
  params: number
  statuses: Set<string>
}

type Document = { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> }

let operations: Promise<DeclaredOperation[]> | undefined

async function loadOperations(origin: string): Promise<DeclaredOperation[]> {
  const res = await exports.default.fetch(new Request(new URL('/openapi.json', origin)))
  if (res.status !== 200) throw new Error(`GET /openapi.json: ${res.status}`)
  const doc = (await res.json()) as Document
  return Object.entries(doc.paths)
    .flatMap(([template, ops]) =>
      Object.entries(ops).map(([method, op]) => ({
        method: method.toUpperCase(),
        template,
        pattern: new RegExp(`^${template.replace(/\{\w+\}/g, '[^/]+')}$`),
        params: (template.match(/\{/g) ?? []).length,
        statuses: new Set(Object.keys(op.responses)),
      })),
    )
    .sort((a, b) => a.params - b.params)
}

/** The operation of the document a request is, if any. */
async function operationOf(method: string, url: URL): Promise<DeclaredOperation | undefined> {
  operations ??= loadOperations(url.origin)
  const known = await operations
  return known.find((op) => op.method === method && op.pattern.test(url.pathname))
}

/**
 * `res` itself when its status is among those its operation declares; throws otherwise.
 * @example await assertDeclaredStatus('GET', new URL('https://api.test/v1/usage'), res)
 */
export async function assertDeclaredStatus(method: string, url: URL, res: Response): Promise<Response> {
  const op = await operationOf(method.toUpperCase(), url)
  if (op && !op.statuses.has(String(res.status))) {
    const body = await res.clone().text()
    throw new Error(
      `${op.method} ${op.template} answered ${res.status}, which its declaration omits (it lists ${[...op.statuses].join(', ')}): ${body.slice(0, 300)}`,
    )
  }
  return res
}
