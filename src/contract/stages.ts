/**
 * @module
 * Job statuses and stages (DESIGN.md §3 "Stage order"). The edge reports `queued`, `preparing`
 * and `storing` itself; the inference server reports the stages between, as it passes them.
 */

/**
 * Every kind the job runner knows: the public `Job.kind`s, then the project's internal `refinement`
 * and `export` (DESIGN.md §3 Job kinds). The D1 enum and the runner's handler table derive from it.
 */
export const JOB_KIND_NAMES = ['remove_background', 'virtual_try_on', 'refinement', 'export'] as const
export type JobKindName = (typeof JOB_KIND_NAMES)[number]
/** The kinds users see as jobs; refinements and exports run on the same runner but are not jobs to users. */
export const PUBLIC_JOB_KINDS = ['remove_background', 'virtual_try_on'] as const satisfies readonly JobKindName[]

export const JOB_STATUSES = ['queued', 'processing', 'succeeded', 'failed', 'canceled'] as const
export const JOB_STAGES = ['queued', 'preparing', 'segmenting', 'refining', 'rendering', 'storing', 'complete'] as const
export type JobStatus = (typeof JOB_STATUSES)[number]
export type JobStage = (typeof JOB_STAGES)[number]

/** The stages an inference call reports in its `stage` frames. */
export const INFERENCE_STAGES = ['segmenting', 'refining', 'rendering'] as const
export type InferenceStage = (typeof INFERENCE_STAGES)[number]

/**
 * The statuses a job never leaves (DESIGN.md §3): its event stream ends and its hold is settled.
 * The SDK gets a generated copy (sdk/src/contract.ts, `npm run sdk:generate`).
 */
export const TERMINAL_STATUSES = ['succeeded', 'failed', 'canceled'] as const satisfies readonly JobStatus[]
export type TerminalStatus = (typeof TERMINAL_STATUSES)[number]

const TERMINAL: ReadonlySet<string> = new Set(TERMINAL_STATUSES)
/** Whether a job with this status has ended (the runner, the store and telemetry ask the same question). */
export const isTerminalStatus = (status: string): status is TerminalStatus => TERMINAL.has(status)
