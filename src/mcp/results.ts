/**
 * @module
 * What an MCP tool answers (DESIGN.md §3 MCP): a job as JSON text and `structuredContent`, its
 * result PNG as an image block when it is at most {@link MAX_IMAGE_BLOCK_BYTES}, and always the
 * signed result URL, made absolute so an assistant can hand it on. A refusal is the REST problem,
 * as an MCP tool error (`isError`) whose text and `structuredContent` carry its `code` and `detail`.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { LOW_CONFIDENCE_CODE } from '../contract/frames'
import type { Env } from '../env'
import type { Problem } from '../errors'
import type { Job } from '../schemas/job'
import { findJob } from '../services/job-store'
import { readResult } from '../services/jobs'

/** DESIGN.md §3 MCP: results as MCP image content up to 1 MB; larger ones only by their URL. */
export const MAX_IMAGE_BLOCK_BYTES = 1024 * 1024

/** A path of this API (`/v1/jobs/…`) as an absolute URL; an absolute one (a presigned R2 URL) as it is. */
export const absolute = (origin: string, url: string) => new URL(url, `${origin}/`).toString()

/** The job with its links and signed result URL absolute. */
export function absoluteJob(job: Job, origin: string): Job {
  const links = Object.fromEntries(Object.entries(job.links).map(([k, v]) => [k, absolute(origin, v)]))
  return {
    ...job,
    links: links as Job['links'],
    result: job.result ? { ...job.result, url: absolute(origin, job.result.url) } : null,
  }
}

/** A JSON answer: the object as text (for clients that read text) and as `structuredContent`. */
export function jsonResult(value: Record<string, unknown>, summary?: string): CallToolResult {
  return {
    content: [
      ...(summary ? [{ type: 'text' as const, text: summary }] : []),
      { type: 'text', text: JSON.stringify(value, null, 2) },
    ],
    structuredContent: value,
  }
}

/**
 * A job's answer. A succeeded job brings its result: the image block (when small enough) and a
 * link to the signed URL; an unfinished one says how to follow it.
 */
export async function jobResult(env: Env, workspaceId: string, job: Job, origin: string): Promise<CallToolResult> {
  const shown = absoluteJob(job, origin)
  const answer = jsonResult(shown, summaryOf(shown))
  if (job.status !== 'succeeded' || !shown.result) return answer
  const image = await imageBlock(env, workspaceId, job)
  answer.content.push(...(image ? [image] : []), {
    type: 'resource_link',
    uri: shown.result.url,
    name: `${job.id}.${job.format ?? 'png'}`,
    mimeType: shown.result.contentType,
    description: `The result (a signed URL, valid until ${shown.result.expiresAt})`,
  })
  return answer
}

function summaryOf(job: Job): string {
  if (job.status === 'succeeded' && job.result) {
    const done = `Job ${job.id} succeeded. Result (signed URL, valid until ${job.result.expiresAt}): ${job.result.url}`
    // An unsure mask says so first-hand, with how to fix it by clicks (the warning's own message).
    const unsure = job.warnings.find((w) => w.code === LOW_CONFIDENCE_CODE)
    return unsure ? `${done}\nWarning ${unsure.code}: ${unsure.message}` : done
  }
  if (job.status === 'queued' || job.status === 'processing') {
    return `Job ${job.id} is ${job.status} (stage ${job.stage}); call get_job with id ${job.id} to follow it.`
  }
  const why = job.error ? `: ${job.error.code}: ${job.error.message}` : ''
  return `Job ${job.id} ${job.status}${why}`
}

/** The result as an MCP image block, or null when it is not a PNG or over the limit. */
async function imageBlock(env: Env, workspaceId: string, job: Job): Promise<ContentBlock | null> {
  if (job.result?.contentType !== 'image/png') return null
  const stored = await readResult(env, await findJob(env.DB, workspaceId, job.id), `job ${job.id}`)
  return imageContent(stored.body, Number(stored.headers['content-length']))
}

type ContentBlock = CallToolResult['content'][number]

/** A stored PNG as an image block when it is at most {@link MAX_IMAGE_BLOCK_BYTES}; else null (and the body let go). */
export async function imageContent(body: ReadableStream, size: number): Promise<ContentBlock | null> {
  if (!(size <= MAX_IMAGE_BLOCK_BYTES)) {
    await body.cancel()
    return null
  }
  const bytes = new Uint8Array(await new Response(body).arrayBuffer())
  return { type: 'image', data: toBase64(bytes), mimeType: 'image/png' }
}

/** Standard base64 (MCP image data), converted in slices: one `String.fromCharCode` call per 32 KiB. */
export function toBase64(bytes: Uint8Array): string {
  let binary = ''
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000))
  }
  return btoa(binary)
}

/** A refusal as an MCP tool error: `code: detail` first, then the whole problem. */
export function errorResult(problem: Problem): CallToolResult {
  return {
    isError: true,
    content: [
      { type: 'text', text: `${problem.code}: ${problem.detail}` },
      { type: 'text', text: JSON.stringify(problem, null, 2) },
    ],
    structuredContent: problem,
  }
}
