/**
 * @module
 * Accepting a removal (SPEC.md §4 POST /v1/removals; the MCP tool `remove_background` too): one
 * job from one source (an upload, a multipart file or a guarded URL fetch), through `slotJob`.
 * An anonymous caller's runner also gets its pixel cap (SPEC.md §5.4).
 */
import { REMOVAL_SOURCES } from '../schemas/removal'
import { ANONYMOUS_MAX_PIXELS } from './anonymous'
import { slotJob } from './slot-jobs'

export const acceptRemoval = slotJob({
  kind: 'remove_background',
  scope: 'removals',
  sources: REMOVAL_SOURCES,
  runnerExtras: ({ auth }) => (auth.kind === 'anonymous' ? { maxPixels: ANONYMOUS_MAX_PIXELS } : {}),
})
