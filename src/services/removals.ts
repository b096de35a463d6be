/**
 * @module
 * Accepting a removal (SPEC.md §4 POST /v1/removals): its spec for the accept path (`accept.ts`):
 * one source (an upload, a multipart file or a guarded URL fetch), one `remove_background` job.
 */
import { parseJsonField } from '../lib/form'
import type { Job } from '../schemas/job'
import { RemovalOptionsSchema, type RemovalOptions } from '../schemas/removal'
import { type AcceptContext, type Accepted, acceptJobs, publicJob } from './accept'
import { ANONYMOUS_MAX_PIXELS } from './anonymous'
import { jobSourcePrefix, resolveSource, requestHash, type SourceInput, sourceRef, uploadRefs } from './job-sources'

export type RemovalInput = { source: SourceInput; options: RemovalOptions }

/** Where a removal's errors point: the JSON members and the multipart part. */
const FIELDS = { uploadId: 'uploadId', sourceUrl: 'sourceUrl', file: 'image' }

/** Parses the multipart `options` field (a JSON string) with the same strict schema as JSON bodies. */
export function parseOptionsField(raw: unknown): RemovalOptions {
  return parseJsonField(raw, RemovalOptionsSchema)
}

export function acceptRemoval(ctx: AcceptContext, input: RemovalInput): Promise<Accepted<Job>> {
  const { env, auth } = ctx
  return acceptJobs(ctx, {
    kind: 'remove_background',
    idempotency: { scope: 'removals', hash: () => requestHash({ source: input.source }, input.options) },
    async draft(jobId) {
      const source = await resolveSource(env, auth.workspaceId, jobSourcePrefix(jobId), input.source, FIELDS)
      return {
        jobs: [
          {
            id: jobId,
            kind: 'remove_background',
            options: input.options,
            sourceKey: source.key,
            input: {
              source: sourceRef(source),
              options: input.options,
              ...(auth.kind === 'anonymous' ? { maxPixels: ANONYMOUS_MAX_PIXELS } : {}),
            },
          },
        ],
        uploads: uploadRefs(input.source, FIELDS),
      }
    },
    ...publicJob(ctx),
  })
}
