/**
 * @module
 * The brush's falloff, one rule for the inference server that rasterises strokes
 * (inference-server/src/editing/strokes.ts) and the page's live preview of a stroke while it is
 * drawn (web/src/editor/brush.ts). No imports, so the page bundles it without zod.
 */

/** Full strength up to `hardness` of the radius, then a smoothstep down to 0 at the radius (t = distance / radius). */
export function falloff(t: number, hardness: number): number {
  if (t <= hardness) return 1
  if (t >= 1) return 0
  const s = (t - hardness) / (1 - hardness)
  return 1 - s * s * (3 - 2 * s)
}
