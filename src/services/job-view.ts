/**
 * @module
 * A job row as the API shows it (SPEC.md §2 Job): the presenter, apart from the SQL
 * (`job-store.ts`) and the running (`jobs.ts`).
 */
import type { Job } from '../schemas/job'
import type { JobRow } from './job-store'
import { signResultPath } from './result-url'
import { bytesExpired } from './stored-bytes'

export async function toJob(row: JobRow, resultSecret: string): Promise<Job> {
  const self = `/v1/jobs/${row.id}`
  let result: Job['result'] = null
  if (row.status === 'succeeded' && row.result_key && !bytesExpired(row)) {
    const signed = await signResultPath(resultSecret, `${self}/result`)
    result = {
      url: signed.path,
      contentType: row.result_content_type ?? 'image/png',
      expiresAt: signed.expiresAt,
      ...(row.result_confidence === null ? {} : { confidence: row.result_confidence }),
    }
  }
  return {
    id: row.id,
    kind: row.kind as Job['kind'],
    ...(row.project_id ? { projectId: row.project_id } : {}),
    ...(row.batch_id ? { batchId: row.batch_id } : {}),
    status: row.status,
    stage: row.stage,
    format: (row.format ?? 'png') as Job['format'],
    modelVersion: row.model_version,
    createdAt: row.created_at,
    startedAt: row.started_at,
    completedAt: row.completed_at,
    expiresAt: row.expires_at,
    result,
    error: row.error_code ? { code: row.error_code, message: row.error_message ?? '' } : null,
    warnings: row.warnings ? (JSON.parse(row.warnings) as Job['warnings']) : [],
    links: { self, events: `${self}/events`, result: `${self}/result`, cancel: self },
  }
}
