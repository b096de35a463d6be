/**
 * The contact sheet of ../shared/gt (photo, truth, each level's alpha; one row per pair), written to
 * bench/results/sheets/, which git ignores: the photos and their truth must never be committed.
 */
import { sharp } from './deps.js'

const ROW_H = 160

/** A row of the contact sheet: the photo, its truth, then each alpha, ROW_H px tall. */
export async function sheetRow(
  photo: Uint8Array,
  truth8: Uint8Array,
  alphas: Uint8Array[],
  width: number,
  height: number,
): Promise<{ buf: Buffer; w: number }> {
  const w = Math.round((width * ROW_H) / height)
  const h = ROW_H
  /** A w×h RGB tile (greyscale planes replicated: sharp keeps a 1-channel raw input at 1 channel). */
  const tile = async (input: Uint8Array, raw?: { width: number; height: number; channels: 1 }) => {
    const { data, info } = await sharp(input, raw ? { raw } : undefined)
      .resize(w, h, { fit: 'fill' })
      .raw()
      .toBuffer({ resolveWithObject: true })
    const rgb = Buffer.alloc(w * h * 3)
    for (let i = 0; i < w * h; i++)
      for (let c = 0; c < 3; c++) rgb[i * 3 + c] = data[i * info.channels + (info.channels >= 3 ? c : 0)]
    return rgb
  }
  const plane = { width, height, channels: 1 as const }
  const tiles = [
    await tile(photo),
    await tile(truth8, plane),
    ...(await Promise.all(alphas.map((a) => tile(a, plane)))),
  ]
  return { buf: await tileRow(tiles, w, h), w: w * tiles.length }
}

/**
 * w×h RGB tiles side by side, `gap` px of `background` after each: one raw RGB row (the sheets of
 * bench/hard-sheet.ts and bench/edge-crops.ts, and sheetRow's).
 */
export async function tileRow(tiles: Buffer[], w: number, h: number, gap = 0, background = '#fff'): Promise<Buffer> {
  return sharp({ create: { width: tiles.length * (w + gap), height: h, channels: 3, background } })
    .composite(
      tiles.map((t, k) => ({
        input: t,
        raw: { width: w, height: h, channels: 3 as const },
        left: k * (w + gap),
        top: 0,
      })),
    )
    .removeAlpha() // composite adds an alpha channel
    .raw()
    .toBuffer()
}

/** Stacks the rows into one JPEG at `file`. */
export async function writeSheet(rows: Array<{ buf: Buffer; w: number }>, file: string): Promise<void> {
  if (!rows.length) return
  const width = Math.max(...rows.map((r) => r.w))
  await sharp({ create: { width, height: ROW_H * rows.length, channels: 3, background: '#fff' } })
    .composite(
      rows.map((r, k) => ({
        input: r.buf,
        raw: { width: r.w, height: ROW_H, channels: 3 as const },
        left: 0,
        top: k * ROW_H,
      })),
    )
    .jpeg({ quality: 85 })
    .toFile(file)
}
