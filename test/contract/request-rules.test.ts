/**
 * Rules a client generated from /openapi.json needs, said in the document and not only in prose
 * (issue 30 item 4): the `Idempotency-Key` header SPEC.md §4 requires on the creation of jobs and
 * batches is `required`, "exactly one of sourceUrl or uploadId" is a `oneOf` of those two
 * members, and a refinement's "points, a box, or both" is an `anyOf` of them. The server's own
 * answers to requests breaking these rules (their codes, fields and messages) are tested in
 * test/worker (validation, idempotency, refinements).
 */
import { describe, expect, it } from 'vitest'
import { createApp } from '../../src/app'

type Schema = {
  $ref?: string
  required?: string[]
  properties?: Record<string, Schema>
  oneOf?: Schema[]
  anyOf?: Schema[]
}
type Parameter = { name: string; in: string; required?: boolean }
type Operation = {
  parameters?: Parameter[]
  requestBody?: { content: Record<string, { schema?: Schema }> }
}
type Doc = { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, Schema> } }

async function openapiDocument(): Promise<Doc> {
  const res = await createApp().request('/openapi.json', {}, { DOCS_URL: 'https://docs.example' })
  expect(res.status).toBe(200)
  return (await res.json()) as Doc
}

const resolve = (doc: Doc, schema: Schema | undefined): Schema => {
  const name = schema?.$ref?.replace('#/components/schemas/', '')
  return (name ? doc.components.schemas[name] : schema) ?? {}
}

/** The members each branch of a `oneOf`/`anyOf` requires, e.g. [['sourceUrl'], ['uploadId']]. */
const branches = (list: Schema[] | undefined) => (list ?? []).map((branch) => branch.required ?? [])

describe('rules in the OpenAPI document', () => {
  it.each([['/v1/removals'], ['/v1/batches'], ['/v1/virtual-try-ons']])(
    'POST %s requires the Idempotency-Key header',
    async (path) => {
      const doc = await openapiDocument()
      const header = doc.paths[path].post.parameters?.find(
        (p) => p.in === 'header' && p.name.toLowerCase() === 'idempotency-key',
      )
      expect(header).toBeDefined()
      expect(header?.required).toBe(true)
    },
  )

  it('an optional Idempotency-Key stays optional (POST /v1/webhooks)', async () => {
    const doc = await openapiDocument()
    const header = doc.paths['/v1/webhooks'].post.parameters?.find((p) => p.name.toLowerCase() === 'idempotency-key')
    expect(header?.required).toBe(false)
  })

  it('a removal request takes exactly one of sourceUrl or uploadId (oneOf)', async () => {
    const doc = await openapiDocument()
    const body = resolve(doc, doc.paths['/v1/removals'].post.requestBody?.content['application/json'].schema)
    expect(branches(body.oneOf)).toEqual([['sourceUrl'], ['uploadId']])
  })

  it("a try-on's person and garment are Sources: exactly one of sourceUrl or uploadId (oneOf)", async () => {
    const doc = await openapiDocument()
    const body = resolve(doc, doc.paths['/v1/virtual-try-ons'].post.requestBody?.content['application/json'].schema)
    for (const member of ['person', 'garment']) {
      expect(branches(resolve(doc, body.properties?.[member]).oneOf), member).toEqual([['sourceUrl'], ['uploadId']])
    }
  })

  it('a refinement request takes points, a box, or both (anyOf)', async () => {
    const doc = await openapiDocument()
    const body = resolve(
      doc,
      doc.paths['/v1/projects/{id}/refinements'].post.requestBody?.content['application/json'].schema,
    )
    expect(branches(body.anyOf)).toEqual([['points'], ['box']])
  })
})
