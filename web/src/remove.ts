/**
 * One removal from the page: the image goes up (anonymously as multipart with the device cookie;
 * signed in through an upload, presigned where the deployment configures it), the job is created
 * with an Idempotency-Key, and its stages are followed over SSE until it ends.
 */
import { CutoutProblem, type Job, request, requestJson } from './api'
import { endOf, followJob, type JobEnd, type JobEvent } from './events'

export interface RemovalOptions {
  quality: 'fast' | 'balanced' | 'high'
  output: 'cutout' | 'mask'
  alpha: { mode: 'raw'; feather: number } | { mode: 'binary'; threshold: number; feather: number }
}

interface Upload {
  id: string
  uploadUrl: string
  uploadHeaders?: Record<string, string>
}

const UPLOAD_TYPES = new Set(['image/jpeg', 'image/png', 'image/webp', 'image/avif', 'image/heic', 'image/heif'])

/** Creates the job and resolves with it as the API first answers (usually queued). */
export async function createRemoval(file: File, options: RemovalOptions, signedIn: boolean): Promise<Job> {
  const headers = { 'idempotency-key': crypto.randomUUID() }
  if (!signedIn) {
    const form = new FormData()
    form.append('image', file, file.name)
    form.append('options', JSON.stringify(options))
    return requestJson<Job>('/v1/removals', { method: 'POST', body: form, headers, anonymous: true })
  }
  const uploadId = await uploadFile(file)
  return requestJson<Job>('/v1/removals', { method: 'POST', json: { uploadId, options }, headers })
}

/** file → POST /v1/uploads → PUT the bytes → complete; resolves with the upload's id. */
async function uploadFile(file: File): Promise<string> {
  const contentType = UPLOAD_TYPES.has(file.type) ? file.type : 'application/octet-stream'
  const upload = await requestJson<Upload>('/v1/uploads', { method: 'POST', json: { contentType } })
  if (upload.uploadUrl.startsWith('/')) {
    // The API's own path (local mode): authenticated like any other call.
    await request(upload.uploadUrl, { method: 'PUT', body: file, headers: { 'content-type': contentType } })
  } else {
    // A presigned R2 URL: the signature is the credential, so no Authorization header goes with it.
    const res = await fetch(upload.uploadUrl, { method: 'PUT', body: file, headers: upload.uploadHeaders ?? {} })
    if (!res.ok)
      throw new CutoutProblem(res.status, { code: 'upload_failed', detail: `The upload was refused (${res.status})` })
  }
  await request(`/v1/uploads/${upload.id}/complete`, { method: 'POST' })
  return upload.id
}

/**
 * Follows the job to its end and resolves with it (its warnings and mask confidence); throws a
 * CutoutProblem with the job's error when it did not succeed.
 */
export async function finishRemoval(job: Job, signedIn: boolean, onEvent: (e: JobEvent) => void): Promise<JobEnd> {
  const end = job.status === 'succeeded' ? endOf(job) : await followJob(job.id, !signedIn, onEvent)
  if (end.status === 'succeeded') return end
  const error = end.error ?? { code: end.status, message: `The job ended ${end.status}` }
  throw new CutoutProblem(422, { code: error.code, detail: error.message })
}

/** The result's bytes, read as the caller that made the job (the device cookie, or the session). */
export async function downloadResult(job: Job, signedIn: boolean): Promise<Blob> {
  const res = await request(`/v1/jobs/${job.id}/result`, { anonymous: !signedIn })
  return res.blob()
}
