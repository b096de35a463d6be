/**
 * @module
 * What every capability's routes share (docs/inference-protocol.md): the body limits, the
 * `RouteContext` a capability registers its routes with, and the `Routes` shape of that
 * registration. server.ts builds the context once and lists the capabilities; a capability
 * imports from here, never from server.ts.
 */
import type { Context, Hono, MiddlewareHandler } from 'hono'
import { bodyLimit } from 'hono/body-limit'
import { MAX_REFERENCES } from '../../src/contract/catalog.js'
import { MAX_IMAGE_BYTES } from '../../src/contract/limits.js'
import { InferenceError } from './errors.js'
import type { Limiter } from './limiter.js'
import type { Segmenter } from './segmentation/index.js'

/** Room for the options part and the multipart framing beside the images. */
const OPTIONS_ALLOWANCE_BYTES = 1024 * 1024

/**
 * A request's body limit by what it carries, each image at the upload limit (SPEC.md §8):
 * `image` (remove, inspect), `twoImages` (an image and its mask, or a person and a garment:
 * revise, export, refine, try-on) and `references` (catalog's up to four).
 */
export const BODY_LIMITS = {
  image: MAX_IMAGE_BYTES + OPTIONS_ALLOWANCE_BYTES,
  twoImages: 2 * MAX_IMAGE_BYTES + OPTIONS_ALLOWANCE_BYTES,
  references: MAX_REFERENCES * MAX_IMAGE_BYTES + OPTIONS_ALLOWANCE_BYTES,
} as const

export type BodySize = keyof typeof BODY_LIMITS
export type BodyLimits = Record<BodySize, number>

/** `Retry-After` (seconds) of a 503 that passes quickly: the model loading, a saturated server. */
export const BRIEF_RETRY_AFTER_S = 1

/** A signed request's verified parts and the loaded model. */
export interface SignedRequest {
  parts: Map<string, Uint8Array>
  segmenter: Segmenter
}

/** What a capability's routes get from the app. */
export interface RouteContext {
  /** Verifies the token, requires the model, reads the body and checks its parts' hashes. */
  signed(c: Context): Promise<SignedRequest>
  limiter: Limiter
  /** The body-limit middleware for a request carrying `size` (413 `image_too_large` past it). */
  bodyLimit(size: BodySize): MiddlewareHandler
}

/** A capability's registration: adds its routes to `app`. server.ts lists one per capability. */
export type Routes = (app: Hono, ctx: RouteContext) => void

/** The body-limit middleware of `maxSize` bytes, refusing past it as the protocol words it. */
function limitBody(maxSize: number): MiddlewareHandler {
  return bodyLimit({
    maxSize,
    onError: () => {
      throw new InferenceError('image_too_large', `Expected a body of at most ${maxSize} bytes`)
    },
  })
}

/** `RouteContext.bodyLimit` for `limits`: one middleware per size, built once. */
export function bodyLimiter(limits: BodyLimits): (size: BodySize) => MiddlewareHandler {
  const bySize: Record<BodySize, MiddlewareHandler> = {
    image: limitBody(limits.image),
    twoImages: limitBody(limits.twoImages),
    references: limitBody(limits.references),
  }
  return (size) => bySize[size]
}
