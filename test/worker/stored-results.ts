/**
 * Results written straight to D1 and R2, for tests about who may read them (no model run).
 */
import { env } from 'cloudflare:test'
import { signResultPath } from '../../src/services/result-url'
import { RAW_CUTOUT } from './helpers'

/**
 * A succeeded job (or a project's export) of the workspace with stored result bytes, written
 * straight to D1 and R2: the signed-URL rules are about authorization, so no model run is needed
 * to have a result to read.
 */
export async function storedResult(
  workspaceId: string,
  kind: 'remove_background' | 'export' = 'remove_background',
  batchId: string | null = null,
) {
  const id = crypto.randomUUID()
  const projectId = kind === 'export' ? crypto.randomUUID() : null
  const bytes = crypto.getRandomValues(new Uint8Array(64))
  const now = new Date().toISOString()
  await env.BUCKET.put(`results/${id}.png`, bytes)
  await env.DB.prepare(
    `INSERT INTO jobs (id, workspace_id, kind, status, stage, options, source_key, result_key, result_content_type,
       project_id, batch_id, created_at, completed_at)
     VALUES (?, ?, ?, 'succeeded', 'complete', ?, ?, ?, 'image/png', ?, ?, ?, ?)`,
  )
    .bind(
      id,
      workspaceId,
      kind,
      JSON.stringify(RAW_CUTOUT),
      `sources/${id}`,
      `results/${id}.png`,
      projectId,
      batchId,
      now,
      now,
    )
    .run()
  const path = projectId ? `/v1/projects/${projectId}/exports/${id}/result` : `/v1/jobs/${id}/result`
  const signed = await signResultPath(env.RESULT_SIGNING_KEY, path)
  return { id, path, bytes, url: signed.path }
}
