/**
 * Every 404 says what was not found (issue 43 item 3): each resource has its own
 * `<resource>_not_found` code, as SPEC.md's `job_not_found` does for jobs, with a title naming it
 * and a page under /errors. None needs a model run: the project is written straight to D1.
 */
import { env } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'
import { errorPages } from '../../scripts/lib/error-pages'
import { signIn } from './auth-helpers'
import { api, type ApiInit, expectProblem, seedWorkspace } from './helpers'
import { registerWebhook } from './webhook-helpers'

/** A project row of the workspace, enough for its sub-resources' routes to look inside it. */
async function insertProject(workspaceId: string): Promise<string> {
  const id = crypto.randomUUID()
  await env.DB.prepare(
    `INSERT INTO projects (id, workspace_id, name, source_job_id, source_key, source_size, source_sha256, width, height, created_at)
     VALUES (?, ?, 'p', ?, ?, 1, 'x', 64, 64, ?)`,
  )
    .bind(id, workspaceId, crypto.randomUUID(), `projects/${id}/source`, new Date().toISOString())
    .run()
  return id
}

const pages = new Map(errorPages())

describe('a 404 names what was not found', () => {
  it('each resource answers its own code, titled after it, with its page under /errors', async () => {
    const { key, workspaceId } = await seedWorkspace()
    const project = await insertProject(workspaceId)
    const endpoint = await registerWebhook(key, 'https://public.test/h')
    const session = await signIn()
    const stranger = await seedWorkspace()
    const unknown = crypto.randomUUID()
    const cases: [string, ApiInit, string, string][] = [
      [`/v1/jobs/${unknown}`, { key }, 'job_not_found', 'Job not found'],
      [`/v1/uploads/${unknown}/complete`, { method: 'POST', key }, 'upload_not_found', 'Upload not found'],
      [
        `/v1/uploads/${unknown}/content`,
        { method: 'PUT', key, body: new Uint8Array(64), headers: { 'content-type': 'image/png' } },
        'upload_not_found',
        'Upload not found',
      ],
      [`/v1/batches/${unknown}`, { key }, 'batch_not_found', 'Batch not found'],
      [`/v1/projects/${unknown}`, { key }, 'project_not_found', 'Project not found'],
      [
        `/v1/projects/${unknown}/revisions`,
        {
          method: 'POST',
          key,
          json: { baseRevisionId: unknown, strokes: [{ tool: 'erase', points: [[0.5, 0.5]], size: 0.05 }] },
        },
        'project_not_found',
        'Project not found',
      ],
      [`/v1/projects/${project}/revisions/${unknown}`, { key }, 'revision_not_found', 'Revision not found'],
      [`/v1/projects/${project}/revisions/${unknown}/mask`, { key }, 'revision_not_found', 'Revision not found'],
      [`/v1/projects/${project}/refinements/${unknown}`, { key }, 'refinement_not_found', 'Refinement not found'],
      [`/v1/projects/${project}/exports/${unknown}`, { key }, 'export_not_found', 'Export not found'],
      [`/v1/projects/${project}/exports/${unknown}/result`, { key }, 'export_not_found', 'Export not found'],
      [`/v1/catalog-images/${unknown}`, { key }, 'catalog_image_not_found', 'Catalog image not found'],
      [
        `/v1/webhooks/${unknown}`,
        { method: 'DELETE', key },
        'webhook_endpoint_not_found',
        'Webhook endpoint not found',
      ],
      [`/v1/webhooks/${unknown}/deliveries`, { key }, 'webhook_endpoint_not_found', 'Webhook endpoint not found'],
      [
        `/v1/webhooks/${endpoint.id}/deliveries/${unknown}/replay`,
        { method: 'POST', key },
        'webhook_delivery_not_found',
        'Webhook delivery not found',
      ],
      [`/v1/api-keys/${unknown}`, { method: 'DELETE', key }, 'api_key_not_found', 'API key not found'],
      [
        '/v1/device-authorizations/BCDF-GHJK',
        { key: session.accessToken },
        'device_authorization_not_found',
        'Device authorization not found',
      ],
      ['/v1/nothing-here', { key }, 'route_not_found', 'Route not found'],
      [`/v1/jobs/${unknown}/nothing`, { key }, 'route_not_found', 'Route not found'],
    ]
    for (const [path, init, code, title] of cases) {
      const problem = await expectProblem(await api(path, init), 404, code).catch((err) => {
        throw new Error(`${init.method ?? 'GET'} ${path}: ${err.message}`)
      })
      expect(problem.title, path).toBe(title)
      const page = pages.get(`errors/${code.replaceAll('_', '-')}.html`)
      expect(page, code).toContain(`<h1>${title}</h1>`)
    }

    // A device approval for a workspace the user is not a member of names the workspace.
    const created = await api('/v1/device-authorizations', { method: 'POST', json: { client: 'not-found test' } })
    const { userCode } = (await created.json()) as { userCode: string }
    const approve = await api(`/v1/device-authorizations/${userCode}/approve`, {
      method: 'POST',
      key: session.accessToken,
      json: { workspaceId: stranger.workspaceId },
    })
    const problem = await expectProblem(approve, 404, 'workspace_not_found')
    expect(problem.detail).toBe(`Workspace ${stranger.workspaceId} not found`)
  })

  it('the detail names the resource and its id', async () => {
    const { key } = await seedWorkspace()
    const unknown = crypto.randomUUID()
    const problem = await expectProblem(await api(`/v1/projects/${unknown}`, { key }), 404, 'project_not_found')
    expect(problem.detail).toBe(`No project ${unknown} in this workspace`)
  })
})
