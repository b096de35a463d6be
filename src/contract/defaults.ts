/**
 * @module
 * What a removal is made with when the request leaves a field out (issue 46: the defaults the
 * document states are the ones the server applies): the model's own alpha at the balanced
 * resolution, as a transparent cutout. `threshold` has none: binary alpha names its cut. Free of
 * zod, so the client generators (scripts/lib/) can read it without loading the schemas.
 */
import type { OutputKind, Quality } from './options.js'

export const DEFAULT_REMOVAL_OPTIONS = {
  quality: 'balanced',
  alpha: { mode: 'raw', feather: 0 },
  output: 'cutout',
} as const satisfies { quality: Quality; alpha: { mode: 'raw'; feather: number }; output: OutputKind }
