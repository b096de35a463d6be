/**
 * The OpenAPI document is validated in Node: the validator compiles JSON schemas with
 * `new Function`, which workerd forbids. The app itself is plain Hono and runs here too.
 */
import { z } from '@hono/zod-openapi'
import { Validator } from '@seriousme/openapi-schema-validator'
import { describe, expect, it } from 'vitest'
import { createApp } from '../../src/app'
import { ROUTE_ACCESS } from '../../src/services/access'

const ROUTES = [
  'get /openapi.json',
  'get /health/live',
  'get /health/ready',
  'post /v1/uploads',
  'put /v1/uploads/{id}/content',
  'post /v1/uploads/{id}/complete',
  'post /v1/removals',
  'post /v1/virtual-try-ons',
  'get /v1/jobs',
  'get /v1/jobs/{id}',
  'delete /v1/jobs/{id}',
  'get /v1/jobs/{id}/events',
  'get /v1/jobs/{id}/result',
  'get /v1/usage',
  'post /v1/batches',
  'get /v1/batches/{id}',
  'post /v1/webhooks',
  'get /v1/webhooks',
  'delete /v1/webhooks/{id}',
  'get /v1/webhooks/{id}/deliveries',
  'post /v1/webhooks/{endpointId}/deliveries/{deliveryId}/replay',
  'get /v1/api-keys',
  'post /v1/api-keys',
  'delete /v1/api-keys/{id}',
  'post /v1/auth/email/start',
  'post /v1/auth/email/verify',
  'post /v1/auth/refresh',
  'post /v1/auth/logout',
  'post /v1/device-authorizations',
  'get /v1/device-authorizations/{userCode}',
  'post /v1/device-authorizations/{userCode}/approve',
  'post /v1/device-authorizations/token',
  'delete /v1/device',
  'get /v1/workspaces',
  'post /v1/projects',
  'get /v1/projects',
  'get /v1/projects/{id}',
  'delete /v1/projects/{id}',
  'get /v1/projects/{id}/events',
  'get /v1/projects/{id}/revisions',
  'post /v1/projects/{id}/revisions',
  'get /v1/projects/{id}/revisions/{revisionId}',
  'get /v1/projects/{id}/revisions/{revisionId}/mask',
  'post /v1/projects/{id}/refinements',
  'get /v1/projects/{id}/refinements/{refinementId}',
  'post /v1/projects/{id}/exports',
  'get /v1/projects/{id}/exports/{exportId}',
  'get /v1/projects/{id}/exports/{exportId}/result',
  'post /v1/catalog-images',
  'get /v1/catalog-images',
  'get /v1/catalog-images/{id}',
]

/** The document route needs no storage and, as a service document, passes no rate limiter. */
const CONTRACT_ENV = { DOCS_URL: 'https://docs.example' }

type Schema = {
  $ref?: string
  example?: unknown
  format?: string
  items?: Schema
  properties?: Record<string, Schema>
}
type Media = { schema?: Schema; example?: unknown; examples?: Record<string, { value?: unknown }> }
type Parameter = { name: string; in: string; example?: unknown; schema?: Schema }
type Operation = {
  operationId?: string
  summary?: string
  tags?: string[]
  parameters?: Parameter[]
  requestBody?: { content: Record<string, Media> }
  responses: Record<string, { content?: Record<string, Media> }>
}
type Doc = { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, Schema> } }

/** The generated SDK's method names: a verb, then words, no separators (`getJobResult`). */
const CAMEL_CASE = /^[a-z]+(?:[A-Z0-9][a-z0-9]*)*$/
/** Guards the example walk against silently finding nothing: ~30 operations × their responses. */
const CHECKED_AT_LEAST = 200
const JSON_MEDIA = /^application\/(?:[\w.-]+\+)?json$/

async function openapiDocument(): Promise<Doc> {
  const res = await createApp().request('/openapi.json', {}, CONTRACT_ENV)
  expect(res.status).toBe(200)
  return (await res.json()) as Doc
}

const operations = (doc: Doc) =>
  Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => ({ route: `${method} ${path}`, op })),
  )

function resolve(doc: Doc, schema: Schema | undefined): Schema {
  const name = schema?.$ref?.replace('#/components/schemas/', '')
  return (name ? doc.components.schemas[name] : schema) ?? {}
}

/** The example a reader (or an SDK generator) sees for a media type: its own, else its schema's. */
function exampleOf(doc: Doc, media: Media): unknown {
  if (media.example !== undefined) return media.example
  const first = Object.values(media.examples ?? {})[0]
  if (first?.value !== undefined) return first.value
  return resolve(doc, media.schema).example
}

const parameterExample = (p: Parameter) => p.example ?? p.schema?.example

/** Every JSON body and response of an operation, with where it sits. */
function jsonContents(op: Operation) {
  const bodies = Object.entries(op.requestBody?.content ?? {}).map(([type, media]) => ({ at: `body ${type}`, media }))
  const responses = Object.entries(op.responses).flatMap(([status, res]) =>
    Object.entries(res.content ?? {}).map(([type, media]) => ({ at: `${status} ${type}`, media })),
  )
  return [...bodies, ...responses].filter(({ at }) => JSON_MEDIA.test(at.split(' ')[1]))
}

describe('GET /openapi.json', () => {
  it('is a valid OpenAPI 3.1 document, version 2.0.0, listing every route with its errors', async () => {
    const res = await createApp().request('/openapi.json', {}, CONTRACT_ENV)
    expect(res.status).toBe(200)
    const doc = (await res.json()) as {
      openapi: string
      info: { version: string }
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>
      components: { schemas: Record<string, unknown> }
    }
    const result = await new Validator().validate(doc as never)
    expect(result.errors ?? []).toEqual([])
    expect(result.valid).toBe(true)
    expect(doc.openapi).toBe('3.1.0')
    expect(doc.info.version).toBe('2.0.0')
    const listed = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m} ${path}`))
    expect(listed.sort()).toEqual([...ROUTES].sort())
    for (const route of ROUTES) {
      const [method, path] = route.split(' ')
      // Any operation may meet an unexpected fault; every one but the service documents is rate-limited.
      expect(Object.keys(doc.paths[path][method].responses), route).toContain('500')
      if (path.startsWith('/v1/')) expect(Object.keys(doc.paths[path][method].responses), route).toContain('429')
    }
    expect(Object.keys(doc.components.schemas)).toEqual(
      expect.arrayContaining(['Job', 'Problem', 'RemovalOptions', 'Upload', 'Usage', 'Project', 'Revision', 'Recipe']),
    )
  })

  it('lists for each operation the error statuses it can answer, not every status everywhere', async () => {
    const doc = await openapiDocument()
    const errors = (route: string) => {
      const [method, path] = route.split(' ')
      return Object.keys(doc.paths[path][method].responses).filter((status) => Number(status) >= 400)
    }
    // No body, no path id, no key: nothing about bodies, resources or replays.
    expect(errors('get /v1/usage')).toEqual(['401', '403', '429', '500'])
    expect(errors('delete /v1/device')).toEqual(['429', '500'])
    expect(errors('get /health/live')).toEqual(['500'])
    // A job-creating route: its body, its credits, its key, its source URL, its scheduling.
    expect(errors('post /v1/removals')).toEqual([
      '400',
      '401',
      '402',
      '403',
      '409',
      '413',
      '415',
      '422',
      '429',
      '500',
      '503',
    ])
    expect(errors('get /v1/jobs/{id}/result')).toEqual(['400', '401', '403', '404', '410', '429', '500'])
    expect(errors('post /v1/device-authorizations/token')).toEqual(['400', '413', '415', '428', '429', '500'])
    for (const route of ROUTES) {
      const [method, path] = route.split(' ')
      const op = doc.paths[path][method] as unknown as Operation
      const has = (status: string) => status in op.responses
      const body = op.requestBody !== undefined
      // Each status follows from the declaration (src/schemas/problems.ts), never the other way round.
      if (body) expect(has('413') && has('415'), `${route}: 413 and 415 with a body`).toBe(true)
      // A resource is named by the path, or by the body (a project's `jobId`).
      if (!body && !op.parameters?.some((p) => p.in === 'path'))
        expect(has('404'), `${route}: 404 with no id to look up`).toBe(false)
      if (!body && !op.parameters?.length) expect(has('400'), `${route}: 400 with nothing to validate`).toBe(false)
      // The readiness check's 503 is its own JSON document (SPEC.md §4), not a problem.
      for (const [status, answer] of Object.entries(op.responses)) {
        if (Number(status) < 400 || route === 'get /health/ready') continue
        expect(Object.keys(answer.content ?? {}), `${route} ${status}`).toEqual(['application/problem+json'])
      }
    }
  })
})

describe('who may call each operation', () => {
  it('x-cutout-scopes names the scopes of its access row (services/access.ts)', async () => {
    const doc = await openapiDocument()
    const said: Record<string, string[] | undefined> = {}
    for (const { route, op } of operations(doc)) {
      const [method, path] = route.split(' ')
      said[`${method.toUpperCase()} ${path}`] = (op as { 'x-cutout-scopes'?: string[] })['x-cutout-scopes']
    }
    for (const [key, row] of Object.entries(ROUTE_ACCESS)) expect(said[key], key).toEqual([...row.scopes])
    // Public and session-only operations have no row, and say none.
    expect(said['POST /v1/auth/email/start']).toBeUndefined()
    expect(said['GET /v1/workspaces']).toBeUndefined()
    expect(said['POST /v1/virtual-try-ons']).toEqual(['tryon:write', 'jobs:read'])
  })
})

describe('operations in /openapi.json', () => {
  it('each has a unique camelCase operationId, a summary and a tag', async () => {
    const ops = operations(await openapiDocument())
    expect(ops).toHaveLength(ROUTES.length)
    const problems: string[] = []
    for (const { route, op } of ops) {
      if (!op.operationId) problems.push(`${route}: no operationId`)
      else if (!CAMEL_CASE.test(op.operationId))
        problems.push(`${route}: operationId ${op.operationId} is not camelCase`)
      if (!op.summary?.trim()) problems.push(`${route}: no summary`)
      if (!op.tags?.length || op.tags.some((t) => !t.trim())) problems.push(`${route}: no tag`)
    }
    const ids = ops.map((o) => o.op.operationId).filter(Boolean)
    for (const id of new Set(ids.filter((id, i) => ids.indexOf(id) !== i))) {
      problems.push(
        `operationId ${id} is used by ${ops
          .filter((o) => o.op.operationId === id)
          .map((o) => o.route)
          .join(' and ')}`,
      )
    }
    expect(problems).toEqual([])
  })

  it('each parameter, JSON body, JSON response and multipart field has an example', async () => {
    const doc = await openapiDocument()
    const missing: string[] = []
    for (const { route, op } of operations(doc)) {
      for (const p of op.parameters ?? []) {
        if (parameterExample(p) === undefined) missing.push(`${route}: ${p.in} parameter ${p.name}`)
      }
      for (const { at, media } of jsonContents(op)) {
        if (exampleOf(doc, media) === undefined) missing.push(`${route}: ${at}`)
      }
      // A multipart body's example is per field; a file part (format binary, or an array of them) has none to give.
      const form = op.requestBody?.content['multipart/form-data']
      for (const [name, part] of Object.entries(resolve(doc, form?.schema).properties ?? {})) {
        // A JSON part (`options`) is a component with its own example.
        const field = part.$ref ? resolve(doc, part) : part
        const binary = field.format === 'binary' || field.items?.format === 'binary'
        if (!binary && field.example === undefined) missing.push(`${route}: multipart field ${name}`)
      }
    }
    expect(missing).toEqual([])
  })

  it('each example passes the zod schema the route validates or answers with', async () => {
    const app = createApp()
    const doc = await openapiDocument()
    const invalid: string[] = []
    let checked = 0
    const check = (where: string, schema: unknown, example: unknown) => {
      if (!(schema instanceof z.ZodType)) return // a plain JSON schema (the document itself, binary bytes)
      checked++
      const result = schema.safeParse(example)
      if (!result.success) invalid.push(`${where}: ${JSON.stringify(example)} → ${result.error.message}`)
    }
    const zodOf = (media: unknown) => (media as { schema?: unknown } | undefined)?.schema
    for (const def of app.openAPIRegistry.definitions) {
      if (def.type !== 'route') continue
      const { method, path, request, responses } = def.route
      const op = doc.paths[path][method]
      for (const [type, media] of Object.entries(request?.body?.content ?? {})) {
        if (!JSON_MEDIA.test(type)) continue
        check(`${method} ${path} body`, zodOf(media), exampleOf(doc, op.requestBody?.content[type] ?? {}))
      }
      for (const [status, res] of Object.entries(responses)) {
        for (const [type, media] of Object.entries(('content' in res && res.content) || {})) {
          if (!JSON_MEDIA.test(type)) continue
          check(`${method} ${path} ${status}`, zodOf(media), exampleOf(doc, op.responses[status].content?.[type] ?? {}))
        }
      }
      const parameterSchemas = { path: request?.params, query: request?.query, header: request?.headers }
      for (const [at, schema] of Object.entries(parameterSchemas)) {
        const values = (op.parameters ?? []).filter((p) => p.in === at).map((p) => [p.name, parameterExample(p)])
        if (values.length) check(`${method} ${path} ${at} parameters`, schema, Object.fromEntries(values))
      }
    }
    expect(invalid).toEqual([])
    expect(checked).toBeGreaterThan(CHECKED_AT_LEAST)
  })
})
