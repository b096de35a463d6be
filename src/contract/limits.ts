/**
 * @module
 * Image limits (SPEC.md §8), shared by the edge (header sniffing, upload checks) and the
 * inference server (decode): one number, one place.
 */

/** Largest image body accepted anywhere: 50 MB. */
export const MAX_IMAGE_BYTES = 50 * 1024 * 1024
/**
 * Largest JSON request body: 1 MiB (docs/decisions.md, "Request bodies: drained refusals and the
 * JSON cap"). The largest a client sends in practice is one brush stroke of 10,000 points, about
 * 420 KB at full double precision; a batch of 100 upload ids is 4 KB. Over it is 413 before the
 * body is read.
 */
export const MAX_JSON_BODY_BYTES = 1024 * 1024
/** Largest image by pixels: 25 MP. */
export const MAX_PIXELS = 25_000_000
/** How many strokes one revision may carry, and points one stroke (editing.ts uses them). */
export const MAX_STROKES = 500
export const MAX_STROKE_POINTS = 10_000
/** How many labelled points one refinement may carry. */
export const MAX_REFINEMENT_POINTS = 50
/** Refinements one project may run (SPEC.md §8). */
export const REFINEMENTS_PER_PROJECT = 20
/** Smallest side of an image. */
export const MIN_SIDE = 32
/** Smallest `maxPixels` the edge may ask the inference server to scale an image down to. */
export const MIN_MAX_PIXELS = 1024

/**
 * How long fetching a `sourceUrl` may take in all: DNS, every redirect hop, and the whole body
 * (docs/decisions.md "A slow sourceUrl"). A source that never answers must not hold the request
 * (and `Prefer: wait`) open; 10 s is ample for 50 MB from a healthy host. The Worker's
 * `SOURCE_FETCH_TIMEOUT_MS` overrides it (tests shrink it).
 */
export const SOURCE_FETCH_TIMEOUT_MS = 10_000
