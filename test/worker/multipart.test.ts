/**
 * Strict multipart (docs/decisions.md): every operation whose body may be multipart refuses a part
 * it does not list with 400 naming the part, before anything is stored or charged. The operations
 * are read from /openapi.json, so a multipart route added later is covered without editing this.
 */
import { env } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'
import { api, expectProblem, fixtureBytes, seedWorkspace, usage } from './helpers'

type Schema = { type?: string; format?: string; items?: Schema; example?: unknown; properties?: Record<string, Schema> }
type Operation = { requestBody?: { content: Record<string, { schema: Schema | { $ref: string } }> } }

async function multipartOperations() {
  const doc = (await (await api('/openapi.json')).json()) as {
    paths: Record<string, Record<string, Operation>>
    components: { schemas: Record<string, Schema> }
  }
  const found: { method: string; path: string; schema: Schema }[] = []
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      const media = op.requestBody?.content['multipart/form-data']
      if (!media) continue
      const ref = (media.schema as { $ref?: string }).$ref
      const schema = ref ? doc.components.schemas[ref.split('/').pop()!] : (media.schema as Schema)
      found.push({ method: method.toUpperCase(), path, schema })
    }
  }
  return found
}

/** Every listed part with a value its schema documents: files get a real photo, text its example. */
async function completeForm(schema: Schema): Promise<FormData> {
  const photo = new File([await fixtureBytes('astronaut.png')], 'astronaut.png', { type: 'image/png' })
  const form = new FormData()
  for (const [name, part] of Object.entries(schema.properties ?? {})) {
    const binary = part.format === 'binary' || part.items?.format === 'binary'
    if (binary) form.append(name, photo)
    else if (part.example !== undefined) form.append(name, String(part.example))
  }
  return form
}

async function countRows(workspaceId: string) {
  const rows = await env.DB.batch([
    env.DB.prepare('SELECT COUNT(*) AS n FROM jobs WHERE workspace_id = ?').bind(workspaceId),
    env.DB.prepare('SELECT COUNT(*) AS n FROM catalog_images WHERE workspace_id = ?').bind(workspaceId),
  ])
  return rows.map((r) => (r.results[0] as { n: number }).n)
}

describe('strict multipart', () => {
  it('every multipart operation refuses an unlisted part with 400 naming it, and charges nothing', async () => {
    const operations = await multipartOperations()
    expect(operations.map((o) => `${o.method} ${o.path}`).sort()).toEqual([
      'POST /v1/catalog-images',
      'POST /v1/removals',
      'POST /v1/virtual-try-ons',
    ])
    for (const { method, path, schema } of operations) {
      const { key, workspaceId } = await seedWorkspace()
      for (const extra of ['format', 'image[]', 'Options', 'references2']) {
        const form = await completeForm(schema)
        form.append(extra, 'x')
        const res = await api(path, { method, key, body: form, headers: { 'idempotency-key': crypto.randomUUID() } })
        const problem = await expectProblem(res, 400, 'invalid_input', extra)
        expect(problem.detail).toBe(`Unknown multipart part ${extra}: only the parts this operation lists are accepted`)
      }
      // An unlisted file part is refused the same way.
      const form = await completeForm(schema)
      form.append('thumbnail', new File([await fixtureBytes('astronaut.png')], 'a.png', { type: 'image/png' }))
      const res = await api(path, { method, key, body: form, headers: { 'idempotency-key': crypto.randomUUID() } })
      await expectProblem(res, 400, 'invalid_input', 'thumbnail')
      expect(await usage(key)).toMatchObject({ held: 0, used: 0 })
      expect(await countRows(workspaceId)).toEqual([0, 0])
    }
  })

  it('a part without a name is 400 saying so, with its position, field Content-Disposition, for every multipart operation', async () => {
    const { key, workspaceId } = await seedWorkspace()
    const boundary = 'unnamed-part-boundary'
    // `name=""` (as `curl -F '=x'` sends) and no `name` at all, after one listed text part.
    for (const disposition of ['form-data; name=""', 'form-data']) {
      for (const { method, path, schema } of await multipartOperations()) {
        // A text part: not a file (a JSON part such as `options` is a text part too).
        const [text] = Object.entries(schema.properties ?? {}).find(
          ([, p]) => p.format !== 'binary' && p.items?.format !== 'binary',
        )!
        const body =
          `--${boundary}\r\nContent-Disposition: form-data; name="${text}"\r\n\r\n{}\r\n` +
          `--${boundary}\r\nContent-Disposition: ${disposition}\r\n\r\nx\r\n--${boundary}--\r\n`
        const res = await api(path, {
          method,
          key,
          body,
          headers: {
            'content-type': `multipart/form-data; boundary=${boundary}`,
            'idempotency-key': crypto.randomUUID(),
          },
        })
        const problem = await expectProblem(res, 400, 'invalid_input', 'Content-Disposition')
        expect(problem.detail).toBe(
          'Expected a name in the Content-Disposition of multipart part 2 (form-data; name="…") but it has none',
        )
      }
    }
    expect(await usage(key)).toMatchObject({ held: 0, used: 0 })
    expect(await countRows(workspaceId)).toEqual([0, 0])
  })

  it('a url-encoded form is not a multipart body: 415 for every multipart operation', async () => {
    const { key } = await seedWorkspace()
    for (const { method, path } of await multipartOperations()) {
      const res = await api(path, {
        method,
        key,
        body: 'options=%7B%7D&image=x',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'idempotency-key': crypto.randomUUID() },
      })
      await expectProblem(res, 415, 'unsupported_media')
    }
    expect(await usage(key)).toMatchObject({ held: 0, used: 0 })
  })
})
