/**
 * @module
 * Image limits (SPEC.md §8), shared by the edge (header sniffing, upload checks) and the
 * inference server (decode): one number, one place.
 */

/** Largest image body accepted anywhere: 50 MB. */
export const MAX_IMAGE_BYTES = 50 * 1024 * 1024
/** Largest image by pixels: 25 MP. */
export const MAX_PIXELS = 25_000_000
/** Smallest side of an image. */
export const MIN_SIDE = 32
/** Smallest `maxPixels` the edge may ask the inference server to scale an image down to. */
export const MIN_MAX_PIXELS = 1024
