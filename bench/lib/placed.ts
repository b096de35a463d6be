/**
 * Composites for the refinement benchmark (bench/refinement.ts): a fixture's subject, cut with its
 * own model mask, scaled down and *placed* over another fixture photo filling the frame, so the
 * subject is a part of a busy scene (the quality benchmark's composites fill the frame with the
 * subject instead). The background photos have salient subjects of their own (a cup, a person,
 * launch towers, a cat's face): the model then takes some of the background for the subject or
 * loses part of the subject, which is what a refinement is for. True alpha and the true subject's
 * box are known.
 */
import { sharp } from './deps.js'
import { fixturePhoto } from './images.js'

export interface PlacedCase {
  fg: string
  bg: string
  /** Subject photo's height as a fraction of the frame's, and its top-left corner (fractions). */
  scale: number
  x: number
  y: number
}

export interface PlacedComposite {
  name: string
  width: number
  height: number
  /** PNG bytes of the composite. */
  bytes: Uint8Array
  /** True alpha in 0..1. */
  alpha: Float32Array
}

/** Fixture photo → 8-bit plane(s) at W×H (lanczos3), keeping the channel count. */
async function resized(input: Uint8Array, channels: 1 | 3, W: number, H: number, raw?: { w: number; h: number }) {
  let p = raw ? sharp(input, { raw: { width: raw.w, height: raw.h, channels } }) : sharp(input)
  p = p.removeAlpha().resize(W, H, { fit: 'fill', kernel: 'lanczos3' })
  if (channels === 1) p = p.toColourspace('b-w')
  const { data, info } = await p.raw().toBuffer({ resolveWithObject: true })
  if (info.channels !== channels) throw new Error(`resize gave ${info.channels} channels`)
  return new Uint8Array(data.buffer, data.byteOffset, data.length)
}

/**
 * Builds one composite at W×H. `masks` holds each fixture's model mask at its own size (the
 * subject's alpha). As in bench/quality-synthetic.ts, the upscaled alpha is made crisp again around its 0.5
 * contour (a ~1.5 px anti-aliased edge), as a real high-resolution photo's object edge is.
 */
export async function placedComposite(
  c: PlacedCase,
  masks: Map<string, { data: Uint8Array; width: number; height: number }>,
  W: number,
  H: number,
  label: string,
): Promise<PlacedComposite> {
  const fgPhoto = await fixturePhoto(c.fg)
  const mask = masks.get(c.fg)
  if (!mask) throw new Error(`no mask for ${c.fg}`)
  const fh = Math.round(c.scale * H)
  const fw = Math.round((fh * fgPhoto.width) / fgPhoto.height)
  const ox = Math.round(c.x * W)
  const oy = Math.round(c.y * H)
  if (ox + fw > W || oy + fh > H) throw new Error(`${c.fg} does not fit at ${c.x},${c.y}`)
  const fg = await resized(fgPhoto.bytes, 3, fw, fh)
  const a8 = await resized(mask.data, 1, fw, fh, { w: mask.width, h: mask.height })
  const bg = await resized((await fixturePhoto(c.bg)).bytes, 3, W, H)
  const alpha = new Float32Array(W * H)
  const comp = new Uint8Array(bg)
  const k = 1.25 * (fh / mask.height)
  for (let y = 0; y < fh; y++) {
    for (let x = 0; x < fw; x++) {
      const p = (oy + y) * W + ox + x
      const q = y * fw + x
      const a = Math.min(1, Math.max(0, (a8[q] / 255 - 0.5) * k + 0.5))
      alpha[p] = a
      for (let ch = 0; ch < 3; ch++) comp[p * 3 + ch] = Math.round(a * fg[q * 3 + ch] + (1 - a) * bg[p * 3 + ch])
    }
  }
  const bytes = await sharp(comp, { raw: { width: W, height: H, channels: 3 } })
    .png({ compressionLevel: 1 })
    .toBuffer()
  const name = `${c.fg.replace(/\..*/, '')}-on-${c.bg.replace(/\..*/, '')}-${label}`
  return { name, width: W, height: H, bytes: new Uint8Array(bytes), alpha }
}
