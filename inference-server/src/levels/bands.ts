/**
 * @module
 * The mask thresholds the levels share (0..255 mask values), named once. The same numbers read the
 * same way everywhere: a level's faint pass, the colour cut's seeds and the confidence all mean
 * one band by "unsure", and the zoomed look one by "edge".
 */

/**
 * Strictly between these a value is unsure: neither clearly the subject nor clearly background
 * (the confidence's unsure share, the faint passes' levels). At or above `high` (or at or below
 * `low`, that is 255 − `high`) a value is sure: the colour cut's seeds (colour-cut.ts).
 */
export const UNSURE_BAND = { low: 25, high: 230 } as const

/** At or above this a value is the subject; below it, background (a mask's side). */
export const SUBJECT = 128

/** Strictly between these a value is on the edge band: `high`'s zoomed look re-segments it (edge-tiles.ts). */
export const EDGE_BAND = { low: 8, high: 247 } as const
