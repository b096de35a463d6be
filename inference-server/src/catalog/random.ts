/**
 * The seed's random numbers (mulberry32): the same seed draws the same numbers on every machine,
 * so a catalog image is reproducible from its `X-Generation-Seed`. Only shadow and placement
 * draw from it; nothing that touches the product's pixels does.
 */

/** Uniform numbers in [0, 1) from a 32-bit seed. */
export type Random = () => number

/**
 * @example const rand = seededRandom(options.seed); const angle = between(rand, -20, 20)
 */
export function seededRandom(seed: number): Random {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** A uniform draw in [lo, hi). */
export const between = (rand: Random, lo: number, hi: number): number => lo + (hi - lo) * rand()
