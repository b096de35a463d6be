/** The benchmark's inputs: the fixture photos, and camera-like JPEGs made with sharp at run time. */
import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { sharp } from './deps.js'

export interface BenchImage {
  name: string
  bytes: Uint8Array
  mimeType: string
  width: number
  height: number
}

const FIXTURES = fileURLToPath(new URL('../fixtures/', import.meta.url))
export const FIXTURE_PHOTOS = ['astronaut.png', 'rocket.jpg', 'chelsea.png', 'coffee.png'] as const

export async function fixturePhoto(name: string): Promise<BenchImage> {
  const bytes = new Uint8Array(await readFile(`${FIXTURES}${name}`))
  const { width = 0, height = 0, format } = await sharp(bytes).metadata()
  return { name, bytes, mimeType: format === 'jpeg' ? 'image/jpeg' : 'image/png', width, height }
}

/** 3:2 sizes: 864×576 ≈ 0.5 MP, 1224×816 ≈ 1 MP, 4240×2832 ≈ 12 MP, 6120×4080 ≈ 25 MP (just under the 25,000,000 px limit). */
export const SYNTHETIC_SIZES = {
  '0.5mp': [864, 576],
  '1mp': [1224, 816],
  '12mp': [4240, 2832],
  '25mp': [6120, 4080],
} as const

/**
 * rocket.jpg upscaled to `width`×`height` with soft-light Gaussian grain, so the JPEG holds
 * camera-like detail (a smooth upscale would compress and PNG-encode unrealistically well).
 */
export async function syntheticJpeg(label: keyof typeof SYNTHETIC_SIZES): Promise<BenchImage> {
  const [width, height] = SYNTHETIC_SIZES[label]
  const base = await sharp(`${FIXTURES}rocket.jpg`)
    .resize(width, height, { fit: 'fill', kernel: 'lanczos3' })
    .raw()
    .toBuffer()
  const grain = await sharp({
    create: { width, height, channels: 3, background: '#808080', noise: { type: 'gaussian', mean: 128, sigma: 24 } },
  })
    .png({ compressionLevel: 0 })
    .toBuffer()
  const bytes = await sharp(base, { raw: { width, height, channels: 3 } })
    .composite([{ input: grain, blend: 'soft-light' }])
    .jpeg({ quality: 90 })
    .toBuffer()
  return { name: `synthetic-${label}.jpg`, bytes: new Uint8Array(bytes), mimeType: 'image/jpeg', width, height }
}
