/**
 * The canvas: the background colour everywhere, darkened by the shadow where it reaches, and the
 * subjects over it (Porter-Duff over). Where a subject's alpha is 255 the canvas takes the
 * subject's colour unchanged; where alpha and shadow are both 0 it is exactly the background.
 */
import type { Rect } from '../render/crop.js'
import type { Size } from './layout.js'

export type Rgb = [number, number, number]

/** A subject at its place: colours and alpha of `rect`'s size. */
export interface Layer {
  rect: Rect
  rgb: Uint8Array
  alpha: Uint8Array
}

/** `#RRGGBB` → channels. */
export const parseHex = (hex: string): Rgb => [1, 3, 5].map((at) => Number.parseInt(hex.slice(at, at + 2), 16)) as Rgb

/**
 * Paints the canvas, RGB interleaved.
 * @example const rgb = composeCanvas({ width: 1024, height: 1024 }, [255, 255, 255], shade, layers)
 */
export function composeCanvas(canvas: Size, background: Rgb, shade: Uint8Array | null, layers: Layer[]): Uint8Array {
  const n = canvas.width * canvas.height
  const out = new Uint8Array(n * 3)
  const [r, g, b] = background
  for (let k = 0, i = 0; k < n; k++, i += 3) {
    const s = shade ? shade[k] : 0
    if (s === 0) {
      out[i] = r
      out[i + 1] = g
      out[i + 2] = b
    } else {
      out[i] = Math.round((r * (255 - s)) / 255)
      out[i + 1] = Math.round((g * (255 - s)) / 255)
      out[i + 2] = Math.round((b * (255 - s)) / 255)
    }
  }
  for (const { rect, rgb, alpha } of layers) {
    for (let y = Math.max(0, -rect.y); y < rect.height && rect.y + y < canvas.height; y++) {
      for (let x = Math.max(0, -rect.x); x < rect.width && rect.x + x < canvas.width; x++) {
        const k = y * rect.width + x
        const a = alpha[k]
        if (a === 0) continue
        const o = ((rect.y + y) * canvas.width + rect.x + x) * 3
        for (let c = 0; c < 3; c++) {
          out[o + c] = a === 255 ? rgb[k * 3 + c] : Math.round((rgb[k * 3 + c] * a + out[o + c] * (255 - a)) / 255)
        }
      }
    }
  }
  return out
}
