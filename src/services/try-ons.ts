/**
 * @module
 * Accepting a virtual try-on (SPEC.md §4 POST /v1/virtual-try-ons; experimental): its spec for
 * the accept path (`accept.ts`): the removal's with two sources (`person`, `garment`; each an
 * upload, a multipart file or a guarded URL fetch) and a seed chosen when none is given.
 */
import { MAX_SEED } from '../contract/catalog'
import type { TryOnOptions } from '../contract/tryon'
import type { Job } from '../schemas/job'
import { TRY_ON_SOURCES } from '../schemas/try-on'
import { type AcceptContext, type Accepted, acceptJobs, acceptStaged, publicJob, type StagedRead } from './accept'
import { resolveSources, type SourceInput, slotsHash, slotUploads, sourceRef } from './job-sources'

export interface TryOnInput {
  person: SourceInput
  garment: SourceInput
  options: TryOnOptions
}

/** Reads the request (`read`, its sources staged under the job's prefix), then accepts it. */
export function acceptTryOn(ctx: AcceptContext, read: StagedRead<TryOnInput>): Promise<Accepted<Job>> {
  return acceptStaged(ctx, read, accept)
}

function accept(ctx: AcceptContext, input: TryOnInput): Promise<Accepted<Job>> {
  const { env, auth } = ctx
  return acceptJobs(ctx, {
    kind: 'virtual_try_on',
    idempotency: { scope: 'virtual-try-ons', hash: () => slotsHash(TRY_ON_SOURCES, input) },
    async draft(jobId) {
      const { person, garment } = await resolveSources(env, auth.workspaceId, jobId, TRY_ON_SOURCES, input)
      // Every random choice follows the seed; one is picked here when none was given.
      const options = {
        ...input.options,
        seed: input.options.seed ?? crypto.getRandomValues(new Uint32Array(1))[0] % (MAX_SEED + 1),
      }
      return {
        jobs: [
          {
            id: jobId,
            kind: 'virtual_try_on',
            options,
            sourceKey: person.key,
            otherSourceKeys: [garment.key],
            input: { person: sourceRef(person), garment: sourceRef(garment), options },
          },
        ],
        uploads: slotUploads(TRY_ON_SOURCES, input),
      }
    },
    ...publicJob(ctx),
  })
}
