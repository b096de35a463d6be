/**
 * The synthetic composites whose true alpha is known (bench/quality-synthetic.ts, levels.ts,
 * crops.ts): each fixture photo's foreground, cut with its own `balanced` mask, laid over the next
 * fixture photo, upscaled (lanczos3) to 4 MP and 12 MP, its edge made crisp again around the
 * mask's 0.5 contour.
 */
import { removeBackground } from '../../inference-server/src/remove.js'
import type { Segmenter } from '../../inference-server/src/segmentation/index.js'
import { sharp } from './deps.js'
import { FIXTURE_PHOTOS, fixturePhoto } from './images.js'

export const QUALITY_SIZES = { '4mp': [2448, 1632], '12mp': [4240, 2832] } as const
export interface Composite {
  name: string
  width: number
  height: number
  /** Encoded PNG of the composite (what the API would receive). */
  bytes: Uint8Array
  /** True alpha 0..1 and foreground RGB (0..255 floats) at the composite's size. */
  alpha: Float32Array
  fg: Uint8Array
}

async function rawRgb(
  input: Uint8Array | Buffer,
  width?: number,
  height?: number,
  channels?: 1 | 3,
): Promise<Uint8Array> {
  const p = channels ? sharp(input, { raw: { width: width!, height: height!, channels } }) : sharp(input)
  return new Uint8Array((await p.removeAlpha().raw().toBuffer()).buffer)
}

/** Resizes an 8-bit plane (1 or 3 channels) with lanczos3, keeping its channel count. */
async function resizeRaw(
  data: Uint8Array,
  w: number,
  h: number,
  channels: 1 | 3,
  W: number,
  H: number,
): Promise<Uint8Array> {
  let p = sharp(data, { raw: { width: w, height: h, channels } }).resize(W, H, { fit: 'fill', kernel: 'lanczos3' })
  if (channels === 1) p = p.toColourspace('b-w')
  const { data: out, info } = await p.raw().toBuffer({ resolveWithObject: true })
  if (info.channels !== channels) throw new Error(`resize gave ${info.channels} channels`)
  return new Uint8Array(out.buffer, out.byteOffset, out.length)
}

/** The composites: each fixture's foreground over the next fixture, at each size. */
export async function makeComposites(
  masks: Map<string, { data: Uint8Array; width: number; height: number }>,
  sizes = Object.keys(QUALITY_SIZES) as (keyof typeof QUALITY_SIZES)[],
): Promise<Composite[]> {
  const out: Composite[] = []
  for (const size of sizes) {
    const [W, H] = QUALITY_SIZES[size]
    for (let i = 0; i < FIXTURE_PHOTOS.length; i++) {
      const fgName = FIXTURE_PHOTOS[i]
      const bgName = FIXTURE_PHOTOS[(i + 1) % FIXTURE_PHOTOS.length]
      const fgPhoto = await fixturePhoto(fgName)
      const mask = masks.get(fgName)!
      const fg = await resizeRaw(await rawRgb(fgPhoto.bytes), fgPhoto.width, fgPhoto.height, 3, W, H)
      const a8 = await resizeRaw(mask.data, mask.width, mask.height, 1, W, H)
      const bgPhoto = await fixturePhoto(bgName)
      const bg = await resizeRaw(await rawRgb(bgPhoto.bytes), bgPhoto.width, bgPhoto.height, 3, W, H)
      const alpha = new Float32Array(W * H)
      const comp = new Uint8Array(W * H * 3)
      // The object's edge is made crisp at the target size (a ~1.5 px anti-aliased transition around
      // the upscaled mask's 0.5 contour), as a sharp edge in a real high-resolution photo: the
      // upscaled mask alone would be as soft as the model's own 1024² view, leaving nothing to recover.
      const k = 1.25 * Math.max(W / mask.width, H / mask.height)
      for (let p = 0; p < alpha.length; p++) {
        const a = Math.min(1, Math.max(0, (a8[p] / 255 - 0.5) * k + 0.5))
        alpha[p] = a
        for (let c = 0; c < 3; c++) comp[p * 3 + c] = Math.round(a * fg[p * 3 + c] + (1 - a) * bg[p * 3 + c])
      }
      const bytes = new Uint8Array(
        await sharp(comp, { raw: { width: W, height: H, channels: 3 } })
          .png({ compressionLevel: 1 })
          .toBuffer(),
      )
      out.push({
        name: `${fgName.replace(/\..*/, '')}-on-${bgName.replace(/\..*/, '')}-${size}`,
        width: W,
        height: H,
        bytes,
        alpha,
        fg,
      })
    }
  }
  return out
}

/** A mask PNG's only channel, or (channels 4) a cutout's RGBA, or (channels 'alpha') a cutout's alpha. */
export async function floatPlane(png: Buffer, channels: 1 | 4 | 'alpha'): Promise<Uint8Array> {
  const p =
    channels === 1
      ? sharp(png).extractChannel(0)
      : channels === 'alpha'
        ? sharp(png).ensureAlpha().extractChannel(3)
        : sharp(png).ensureAlpha()
  return new Uint8Array((await p.raw().toBuffer()).buffer)
}

/** The true alphas of the composites: each fixture's own `balanced` mask at its native size. */
export async function fixtureMasks(
  model: Segmenter,
): Promise<Map<string, { data: Uint8Array; width: number; height: number }>> {
  const masks = new Map<string, { data: Uint8Array; width: number; height: number }>()
  for (const name of FIXTURE_PHOTOS) {
    const photo = await fixturePhoto(name)
    const r = await removeBackground(model, photo.bytes, {
      quality: 'balanced',
      alpha: { mode: 'raw', feather: 0 },
      output: 'mask',
    })
    masks.set(name, { data: await floatPlane(r.png, 1), width: photo.width, height: photo.height })
  }
  return masks
}
