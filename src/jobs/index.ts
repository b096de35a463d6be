/**
 * @module
 * Every job kind the runner knows, by its `Job.kind` name. Adding a kind: a handler file here,
 * a line below, and a route on the inference server (docs/architecture.md).
 */
import type { JobKindName } from '../contract/stages'
import { type ExportInput, exportKind } from './export'
import type { JobKind } from './kind'
import { type RefinementInput, refinement } from './refinement'
import { type RemoveBackgroundInput, removeBackground } from './remove-background'
import { type VirtualTryOnInput, virtualTryOn } from './virtual-try-on'

/** Each kind's input (a kind in `JOB_KIND_NAMES` without one here does not compile: `JOB_KINDS` below). */
export interface JobInputs {
  remove_background: RemoveBackgroundInput
  virtual_try_on: VirtualTryOnInput
  refinement: RefinementInput
  export: ExportInput
}

export type { JobKindName }

export const JOB_KINDS: { [K in JobKindName]: JobKind<JobInputs[K]> } = {
  remove_background: removeBackground,
  virtual_try_on: virtualTryOn,
  refinement,
  export: exportKind,
}

export function jobKind(name: string): JobKind<unknown> {
  const kind = JOB_KINDS[name as JobKindName] as JobKind<unknown> | undefined
  if (!kind) throw new Error(`Unknown job kind ${name}`)
  return kind
}

export type { JobKind, StoredObject, StoredOutput } from './kind'
