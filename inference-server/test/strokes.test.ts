/**
 * The stroke rasteriser (src/editing/strokes.ts, coverage.ts) against a brute-force reading of
 * its semantics: every pixel, the distance to every segment, no boxes, slabs or envelopes.
 */
import { describe, expect, it } from 'vitest'
import type { Stroke } from '../../src/contract/editing.js'
import type { Mask } from '../src/imaging/types.js'
import { applyStrokes, brushRadius, checkStrokeWork, falloff } from '../src/editing/strokes.js'

/** The semantics, literally: min over segments of the distance, falloff, blend, round. */
function reference(mask: Mask, strokes: Stroke[]): Uint8Array {
  const { width: w, height: h } = mask
  const out = mask.data.slice()
  for (const s of strokes) {
    const r = brushRadius(s.size, w, h)
    const pts = s.points.map(([x, y]) => [x * w, y * h])
    const segs = pts.length === 1 ? [[pts[0], pts[0]]] : pts.slice(1).map((b, k) => [pts[k], b])
    for (let j = 0; j < h; j++) {
      for (let i = 0; i < w; i++) {
        let best = Number.POSITIVE_INFINITY
        for (const [[ax, ay], [bx, by]] of segs) {
          const [dx, dy, qx, qy] = [bx - ax, by - ay, i + 0.5 - ax, j + 0.5 - ay]
          const len2 = dx * dx + dy * dy
          const t = len2 === 0 ? 0 : Math.min(1, Math.max(0, (qx * dx + qy * dy) / len2))
          best = Math.min(best, Math.hypot(qx - t * dx, qy - t * dy))
        }
        if (best > r) continue
        const a = s.opacity * falloff(best / r, s.hardness)
        const m = out[j * w + i]
        out[j * w + i] = Math.round(s.tool === 'restore' ? m + (255 - m) * a : m * (1 - a))
      }
    }
  }
  return out
}

/** A fixed pseudo-random sequence, so a failure reproduces. */
function lcg(seed: number): () => number {
  let state = seed
  return () => {
    state = (state * 1103515245 + 12345) % 2147483648
    return state / 2147483648
  }
}

function randomStroke(rnd: () => number): Stroke {
  const n = 1 + Math.floor(rnd() * (rnd() < 0.5 ? 3 : 30))
  const step = rnd() * 0.3
  let [x, y] = [rnd(), rnd()]
  const points = Array.from({ length: n }, () => {
    const p: [number, number] = [x, y]
    x = Math.min(1, Math.max(0, x + (rnd() - 0.5) * step))
    y = Math.min(1, Math.max(0, y + (rnd() - 0.5) * step))
    return p
  })
  return {
    tool: rnd() < 0.5 ? 'restore' : 'erase',
    points,
    size: rnd() < 0.2 ? 0.002 : rnd() * 0.6,
    hardness: rnd() < 0.3 ? 1 : rnd(),
    opacity: rnd() < 0.3 ? 1 : rnd(),
  }
}

describe('stroke rasterisation', () => {
  it('matches the brute-force semantics on random strokes', async () => {
    const rnd = lcg(7)
    let pixels = 0
    let off = 0
    for (let trial = 0; trial < 40; trial++) {
      const [width, height] = [16 + Math.floor(rnd() * 80), 16 + Math.floor(rnd() * 80)]
      const data = Uint8Array.from({ length: width * height }, () => (rnd() < 0.5 ? 0 : Math.floor(rnd() * 256)))
      const strokes = Array.from({ length: 1 + Math.floor(rnd() * 3) }, () => randomStroke(rnd))
      const expected = reference({ data, width, height }, strokes)
      const actual = (await applyStrokes({ data: data.slice(), width, height }, strokes)).data
      for (let k = 0; k < expected.length; k++) {
        // The distance is computed in another order than the reference's: an ulp may round a
        // pixel the other way, never further.
        expect(Math.abs(actual[k] - expected[k])).toBeLessThanOrEqual(1)
        if (actual[k] !== expected[k]) off++
      }
      pixels += expected.length
    }
    expect(off / pixels).toBeLessThan(1e-4)
  })

  it('refuses requests whose strokes would take seconds, before any pixel', () => {
    const points = Array.from({ length: 10_000 }, (_, k) => [0.5 + 0.3 * Math.sin(k / 50), 0.5] as [number, number])
    const heavy: Stroke = { tool: 'restore', points, size: 1, hardness: 1, opacity: 1 }
    expect(() => checkStrokeWork({ width: 4000, height: 3000, strokes: [heavy] })).toThrow(/use fewer points/)
    expect(() => checkStrokeWork({ width: 4000, height: 3000, strokes: [{ ...heavy, size: 0.02 }] })).not.toThrow()
  })
})
