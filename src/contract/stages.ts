/**
 * @module
 * Job statuses and stages (DESIGN.md §3 "Stage order"). The edge reports `queued`, `preparing`
 * and `storing` itself; the inference server reports the stages between, as it passes them.
 */

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
