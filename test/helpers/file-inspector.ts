/**
 * Reads the files the API returns, for Worker tests that run in workerd (no sharp there): the
 * fixture server's `POST /inspect?as=image|zip|psd` takes the bytes and answers JSON. Images are
 * decoded with sharp (`channel0` is the first channel's pixels and `alpha` the alpha channel's, base64, when `pixels=1`), zips
 * with fflate, PSDs with ag-psd — the libraries a user of the API would read them with.
 */
import { createHash } from 'node:crypto'
import { initializeCanvas, readPsd } from 'ag-psd'
import { unzipSync } from 'fflate'
import sharp from 'sharp'
import type { ImageReport } from './file-report'

async function describeImage(bytes: Uint8Array, withPixels: boolean): Promise<ImageReport> {
  const meta = await sharp(bytes).metadata()
  const { data, info } = await sharp(bytes).ensureAlpha().raw().toBuffer({ resolveWithObject: true })
  const at = (x: number, y: number) => {
    const i = (y * info.width + x) * 4
    return [x, y, data[i], data[i + 1], data[i + 2], data[i + 3]]
  }
  const [w, h] = [info.width - 1, info.height - 1]
  const border = [at(0, 0), at(w, 0), at(0, h), at(w, h), at(w >> 1, 0), at(0, h >> 1), at(w, h >> 1), at(w >> 1, h)]
  let channel0: string | undefined
  let alpha: string | undefined
  if (withPixels) {
    const plane = Buffer.alloc(info.width * info.height)
    const alphaPlane = Buffer.alloc(plane.length)
    for (let i = 0; i < plane.length; i++) {
      plane[i] = data[i * 4]
      alphaPlane[i] = data[i * 4 + 3]
    }
    channel0 = plane.toString('base64')
    alpha = alphaPlane.toString('base64')
  }
  return {
    format: meta.format ?? 'unknown',
    width: meta.width ?? 0,
    height: meta.height ?? 0,
    channels: meta.channels ?? 0,
    sha256: createHash('sha256').update(bytes).digest('hex'),
    channel0,
    alpha,
    border,
  }
}

async function describeZip(bytes: Uint8Array) {
  const files = unzipSync(bytes)
  return {
    files: await Promise.all(
      Object.entries(files).map(async ([name, content]) => ({ name, ...(await describeImage(content, false)) })),
    ),
  }
}

// ag-psd makes ImageData objects even with `useImageData` (for layer masks); Node has none, and
// plain pixel buffers are all it needs. No canvas is ever drawn.
initializeCanvas(
  () => {
    throw new Error('no canvas here')
  },
  (width, height) => ({ data: new Uint8ClampedArray(width * height * 4), width, height }) as never,
)

function describePsd(bytes: Uint8Array) {
  const psd = readPsd(bytes, { useImageData: true, skipThumbnail: true })
  return {
    width: psd.width,
    height: psd.height,
    layers: (psd.children ?? []).map((layer) => ({
      name: layer.name,
      hidden: layer.hidden ?? false,
      width: (layer.right ?? 0) - (layer.left ?? 0),
      height: (layer.bottom ?? 0) - (layer.top ?? 0),
      hasMask: Boolean(layer.mask?.imageData),
    })),
  }
}

/** Answers one `/inspect` request. */
export async function inspectFile(as: string, bytes: Uint8Array, withPixels: boolean): Promise<unknown> {
  if (as === 'zip') return describeZip(bytes)
  if (as === 'psd') return describePsd(bytes)
  return describeImage(bytes, withPixels)
}
