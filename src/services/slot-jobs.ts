/**
 * @module
 * The accept of a public job made of the images its request names and its options, one job per
 * request (SPEC.md §4 Processing). Removals and try-ons are declared with it; a new kind of that
 * shape declares its accept in its route (`accept: slotJob({...})`) and needs no service of its
 * own. The images are the schema file's `SourceSlots`: each one's source is stored (or found) under
 * the job, the first is the job's own source (`jobs.source_key`) and the rest are recorded with it,
 * and the idempotency hash and the uploads the insert checks follow from the same slots.
 */
import type { PUBLIC_JOB_KINDS } from '../contract/stages'
import type { JobInputs } from '../jobs'
import type { Job } from '../schemas/job'
import { type AcceptContext, type Accepted, acceptJobs, acceptStaged, publicJob, type StagedRead } from './accept'
import {
  resolveSources,
  type SourceInput,
  type SourceSlots,
  slotNames,
  slotsHash,
  slotUploads,
  sourceRef,
} from './job-sources'

type PublicJobKind = (typeof PUBLIC_JOB_KINDS)[number]

/** What a request of such a kind carries: each named image's source, and the options. */
export type SlotInput<S extends string, O = unknown> = Record<S, SourceInput> & { options: O }

export interface SlotJob<S extends string, O> {
  kind: PublicJobKind
  /** The idempotency scope: the resource's path segment (`removals`). */
  scope: string
  sources: SourceSlots<S>
  /** The options the row keeps and the runner gets, from the request's (a seed chosen when none was given); default: as given. */
  options?: (given: O) => O
  /** What else the runner gets, from who asks (an anonymous caller's pixel cap). */
  runnerExtras?: (ctx: AcceptContext) => object
}

/** The accept of `spec`'s kind: reads the request (its sources staged under the job's prefix), then accepts it. */
export function slotJob<S extends string, O>(spec: SlotJob<S, O>) {
  return (ctx: AcceptContext, read: StagedRead<SlotInput<S, O>>): Promise<Accepted<Job>> =>
    acceptStaged(ctx, read, (staged, input) => accept(staged, spec, input))
}

function accept<S extends string, O>(ctx: AcceptContext, spec: SlotJob<S, O>, input: SlotInput<S, O>) {
  const { env, auth } = ctx
  return acceptJobs(ctx, {
    kind: spec.kind,
    idempotency: { scope: spec.scope, hash: () => slotsHash(spec.sources, input) },
    async draft(jobId) {
      const stored = await resolveSources(env, auth.workspaceId, jobId, spec.sources, input)
      const options = spec.options ? spec.options(input.options) : input.options
      const [first, ...others] = slotNames(spec.sources)
      const refs = Object.fromEntries(slotNames(spec.sources).map((name) => [name, sourceRef(stored[name])]))
      return {
        jobs: [
          {
            id: jobId,
            kind: spec.kind,
            options,
            sourceKey: stored[first].key,
            ...(others.length ? { otherSourceKeys: others.map((name) => stored[name].key) } : {}),
            // The kind's input is its slots' sources by name and its options (jobs/<kind>.ts): what
            // the schema file's slots are called is what the kind reads, which no type here ties.
            input: { ...refs, options, ...spec.runnerExtras?.(ctx) } as unknown as JobInputs[PublicJobKind],
          },
        ],
        uploads: slotUploads(spec.sources, input),
      }
    },
    ...publicJob(ctx),
  })
}
