/**
 * @module
 * Accepting a removal (SPEC.md §4 POST /v1/removals): its spec for the accept path (`accept.ts`):
 * one source (an upload, a multipart file or a guarded URL fetch), one `remove_background` job.
 */
import type { Job } from '../schemas/job'
import { REMOVAL_SOURCES, type RemovalOptions } from '../schemas/removal'
import { type AcceptContext, type Accepted, acceptJobs, acceptStaged, publicJob, type StagedRead } from './accept'
import { ANONYMOUS_MAX_PIXELS } from './anonymous'
import { resolveSources, type SourceInput, slotsHash, slotUploads, sourceRef } from './job-sources'

export type RemovalInput = { source: SourceInput; options: RemovalOptions }

/** Reads the request (`read`, its sources staged under the job's prefix), then accepts it. */
export function acceptRemoval(ctx: AcceptContext, read: StagedRead<RemovalInput>): Promise<Accepted<Job>> {
  return acceptStaged(ctx, read, accept)
}

function accept(ctx: AcceptContext, input: RemovalInput): Promise<Accepted<Job>> {
  const { env, auth } = ctx
  return acceptJobs(ctx, {
    kind: 'remove_background',
    idempotency: { scope: 'removals', hash: () => slotsHash(REMOVAL_SOURCES, input) },
    async draft(jobId) {
      const { source } = await resolveSources(env, auth.workspaceId, jobId, REMOVAL_SOURCES, input)
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
        uploads: slotUploads(REMOVAL_SOURCES, input),
      }
    },
    ...publicJob(ctx),
  })
}
