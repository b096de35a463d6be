/**
 * One removal from the page: the image goes up (anonymously as multipart with the device cookie;
 * signed in through an upload, presigned where the deployment configures it), the job is created
 * with an Idempotency-Key, and its stages are followed over SSE until it ends.
 */
import { jobProblem } from '../../sdk/src/client'
import { cutout, type Job, request, requestJson, type Schemas } from './api'
import { endOf, followJob, type JobEnd, type JobEvent } from './events'

export type RemovalOptions = Schemas['RemovalOptions']

/** Creates the job and resolves with it as the API first answers (usually queued). */
export async function createRemoval(file: File, options: RemovalOptions, signedIn: boolean): Promise<Job> {
  if (!signedIn) {
    const form = new FormData()
    form.append('image', file, file.name)
    form.append('options', JSON.stringify(options))
    const headers = { 'idempotency-key': crypto.randomUUID() }
    return requestJson<Job>('/v1/removals', { method: 'POST', body: form, headers, anonymous: true })
  }
  // The SDK's upload: POST /v1/uploads, the bytes PUT (with no credential to a presigned URL), complete.
  const client = cutout()
  const upload = await client.upload(file)
  return client.createRemoval({ uploadId: upload.id }, options)
}

/**
 * Follows the job to its end and resolves with it (its warnings and mask confidence); throws the
 * SDK's problem for a job that did not succeed, with the job's own error code.
 */
export async function finishRemoval(job: Job, signedIn: boolean, onEvent: (e: JobEvent) => void): Promise<JobEnd> {
  const end = job.status === 'succeeded' ? endOf(job) : await followJob(job.id, !signedIn, onEvent)
  if (end.status === 'succeeded') return end
  throw jobProblem({ ...job, ...end, error: end.error ?? null })
}

/** The result's bytes, read as the caller that made the job (the device cookie, or the session). */
export async function downloadResult(job: Job, signedIn: boolean): Promise<Blob> {
  const res = await request(`/v1/jobs/${job.id}/result`, { anonymous: !signedIn })
  return res.blob()
}
