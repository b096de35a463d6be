/**
 * @module
 * Accepting a try-on (SPEC.md §4 POST /v1/virtual-try-ons, experimental; the MCP tool `try_on`
 * too): a person and a garment, one job, through `slotJob`. Every random choice follows the seed,
 * chosen here when none was given.
 */
import { withSeed } from '../contract/catalog'
import type { TryOnOptions } from '../contract/tryon'
import { TRY_ON_SOURCES } from '../schemas/try-on'
import { slotJob } from './slot-jobs'

export const acceptTryOn = slotJob<keyof typeof TRY_ON_SOURCES, TryOnOptions>({
  kind: 'virtual_try_on',
  scope: 'virtual-try-ons',
  sources: TRY_ON_SOURCES,
  options: (given: TryOnOptions) => withSeed(given),
})
