/**
 * Refinement by clicks (src/refinement/clicks.ts) on drawn scenes whose right answer is plain: a
 * click fixes the whole part of the photo it lands on, up to the photo's edges, and leaves what
 * the photo separates from it alone; every click holds. (Quality on real photos is
 * bench/clicks.ts's to measure.)
 */
import { describe, expect, it } from 'vitest'
import type { Mask, RgbImage } from '../src/imaging/types.js'
import { refineByClicks } from '../src/refinement/clicks.js'

const W = 320
const H = 240

/** A grey scene with coloured rectangles drawn on it, and a mask with the given rectangles at 255. */
function scene(rects: { x0: number; y0: number; x1: number; y1: number; rgb: [number, number, number] }[]) {
  const data = new Uint8Array(W * H * 3).fill(128)
  for (const r of rects)
    for (let y = r.y0; y < r.y1; y++) for (let x = r.x0; x < r.x1; x++) data.set(r.rgb, (y * W + x) * 3)
  return { data, width: W, height: H, channels: 3 } as RgbImage
}
function mask(rects: { x0: number; y0: number; x1: number; y1: number }[]): Mask {
  const data = new Uint8Array(W * H)
  for (const r of rects) for (let y = r.y0; y < r.y1; y++) data.fill(255, y * W + r.x0, y * W + r.x1)
  return { data, width: W, height: H }
}
const inside = (m: Mask, r: { x0: number; y0: number; x1: number; y1: number }) => {
  const out: number[] = []
  for (let y = r.y0; y < r.y1; y++) for (let x = r.x0; x < r.x1; x++) out.push(m.data[y * W + x])
  return out
}
const share = (values: number[], test: (v: number) => boolean) => values.filter(test).length / values.length
/** A rectangle less its 2-pixel rim, where the photo's edge is blurred and either side is right. */
const core = (r: { x0: number; y0: number; x1: number; y1: number }) => ({
  x0: r.x0 + 2,
  y0: r.y0 + 2,
  x1: r.x1 - 2,
  y1: r.y1 - 2,
})

const SUBJECT = { x0: 40, y0: 40, x1: 240, y1: 200 }
const RED: [number, number, number] = [200, 30, 30]

describe('refinement by clicks', () => {
  it('a foreground click fills the whole part the model missed, up to the photo’s edges', async () => {
    const photo = scene([{ ...SUBJECT, rgb: RED }])
    // The model saw the subject's left third only.
    const base = mask([{ x0: 40, y0: 40, x1: 107, y1: 200 }])
    const out = await refineByClicks(photo, base, [{ x: 200, y: 120, foreground: true }])
    expect(share(inside(out, core(SUBJECT)), (v) => v >= 128)).toBeGreaterThan(0.99)
    const background = [
      ...inside(out, { x0: 0, y0: 0, x1: W, y1: 30 }),
      ...inside(out, { x0: 250, y0: 0, x1: W, y1: H }),
    ]
    expect(background.every((v) => v < 128)).toBe(true)
  })

  it('a background click drops a blob the model took in, and keeps the subject the photo separates from it', async () => {
    const blob = { x0: 240, y0: 60, x1: 300, y1: 180 }
    const photo = scene([
      { ...SUBJECT, rgb: RED },
      { ...blob, rgb: [40, 160, 40] },
    ])
    const out = await refineByClicks(photo, mask([SUBJECT, blob]), [{ x: 280, y: 120, foreground: false }])
    expect(share(inside(out, core(blob)), (v) => v < 128)).toBeGreaterThan(0.99)
    expect(share(inside(out, core(SUBJECT)), (v) => v >= 128)).toBeGreaterThan(0.99)
  })

  it('a click on a thin strip the model missed moves that edge, without flooding the like-coloured background behind it', async () => {
    // The background right of the subject is nearly its colour (a brown bear on a dark curtain):
    // only the model's edge tells them apart, and the model missed the subject's last 8 pixels.
    const curtain = { x0: 240, y0: 0, x1: W, y1: H }
    const photo = scene([
      { ...curtain, rgb: [180, 40, 36] },
      { ...SUBJECT, rgb: RED },
    ])
    const base = mask([{ x0: 40, y0: 40, x1: 232, y1: 200 }])
    const out = await refineByClicks(photo, base, [{ x: 236, y: 120, foreground: true }])
    // The strip near the click is filled; the curtain a strip's width and more away is not taken.
    expect(share(inside(out, { x0: 233, y0: 100, x1: 238, y1: 140 }), (v) => v >= 128)).toBeGreaterThan(0.9)
    expect(share(inside(out, { x0: 264, y0: 0, x1: W, y1: H }), (v) => v < 128)).toBeGreaterThan(0.99)
  })

  it('every click holds: an earlier click’s pixel keeps its side when a later click pulls the other way nearby', async () => {
    const photo = scene([{ ...SUBJECT, rgb: RED }])
    const base = mask([SUBJECT])
    const clicks = [
      { x: 60, y: 60, foreground: true },
      { x: 64, y: 60, foreground: false },
    ]
    const out = await refineByClicks(photo, base, clicks)
    expect(out.data[60 * W + 60]).toBeGreaterThanOrEqual(128)
    expect(out.data[60 * W + 64]).toBeLessThan(128)
    // And nothing else of the subject goes with the second click: the first holds its surface.
    expect(share(inside(out, SUBJECT), (v) => v >= 128)).toBeGreaterThan(0.95)
  })
})
