/** Interleaved 8-bit sRGB pixels: what decode produces and segmentation and compose consume. */
export interface RgbImage {
  data: Uint8Array
  width: number
  height: number
  channels: 3
}

/** One 8-bit alpha value per pixel, row-major, 0 = background, 255 = foreground. */
export interface Mask {
  data: Uint8Array
  width: number
  height: number
}

export type ImageMime = 'image/jpeg' | 'image/png' | 'image/webp' | 'image/avif' | 'image/heic' | 'image/heif'
