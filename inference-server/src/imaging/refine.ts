/**
 * Edge refinement for `quality=high`: a guided filter (He, Sun & Tang 2010) of the mask, guided by
 * the source's luminance at source resolution. The model sees the image at 1024², so on a large
 * photo its upscaled mask edge is several source pixels soft; the filter re-aligns that edge with
 * the photo's own edges. Only the mask's uncertain pixels (neither 0 nor 255) take the filtered
 * value; a plain guided filter also spreads faint tails into the certain background.
 * Above `maxWorkPixels` it runs as the "fast guided filter" (He & Sun 2015): coefficients at a
 * reduced size, upsampled, applied at full size.
 */
import sharp from 'sharp';
import type { Mask, RgbImage } from './types.js';

export interface RefineOptions {
  /** Window radius in source pixels; by default 4 model pixels' worth (source long side / 1024 × 4), at least 4: the model edge is about that soft. */
  radius?: number;
  /** Regularisation (guide in 0..1): larger keeps more of the original mask. */
  eps?: number;
  /** Work at most this many pixels for the window statistics. */
  maxWorkPixels?: number;
}

/** Mean over a (2r+1)² window, clipped at the borders, by separable running sums: O(n) for any r. */
export function boxMean(src: Float32Array, width: number, height: number, r: number): Float32Array {
  const tmp = new Float32Array(src.length);
  const out = new Float32Array(src.length);
  for (let y = 0; y < height; y++) {
    const row = y * width;
    let sum = 0;
    for (let x = 0; x <= Math.min(r, width - 1); x++) sum += src[row + x];
    for (let x = 0; x < width; x++) {
      const lo = Math.max(0, x - r);
      const hi = Math.min(width - 1, x + r);
      tmp[row + x] = sum / (hi - lo + 1);
      if (x + r + 1 < width) sum += src[row + x + r + 1];
      if (x - r >= 0) sum -= src[row + x - r];
    }
  }
  for (let x = 0; x < width; x++) {
    let sum = 0;
    for (let y = 0; y <= Math.min(r, height - 1); y++) sum += tmp[y * width + x];
    for (let y = 0; y < height; y++) {
      const lo = Math.max(0, y - r);
      const hi = Math.min(height - 1, y + r);
      out[y * width + x] = sum / (hi - lo + 1);
      if (y + r + 1 < height) sum += tmp[(y + r + 1) * width + x];
      if (y - r >= 0) sum -= tmp[(y - r) * width + x];
    }
  }
  return out;
}

/** 1-channel 8-bit plane → floats in 0..1, resized by libvips when a size is given. */
async function plane(data: Uint8Array, width: number, height: number, channels: 1 | 3, size?: [number, number]): Promise<Float32Array> {
  let pipeline = sharp(data, { raw: { width, height, channels } });
  if (size) pipeline = pipeline.resize(size[0], size[1], { fit: 'fill', kernel: 'linear' });
  // toColourspace('b-w'): luminance for RGB, and keeps a 1-channel raw at 1 channel (STACK.md).
  const { data: out, info } = await pipeline.toColourspace('b-w').raw().toBuffer({ resolveWithObject: true });
  if (info.channels !== 1) throw new Error(`expected 1 channel, got ${info.channels}`);
  const floats = new Float32Array(out.length);
  for (let i = 0; i < out.length; i++) floats[i] = out[i] / 255;
  return floats;
}

/** Half-pixel-centred bilinear sampling of a float plane at (x, y) in its own coordinates. */
function sample(src: Float32Array, width: number, height: number, x: number, y: number): number {
  const x0 = Math.min(Math.max(Math.floor(x), 0), width - 1);
  const y0 = Math.min(Math.max(Math.floor(y), 0), height - 1);
  const x1 = Math.min(x0 + 1, width - 1);
  const y1 = Math.min(y0 + 1, height - 1);
  const fx = Math.min(Math.max(x - x0, 0), 1);
  const fy = Math.min(Math.max(y - y0, 0), 1);
  const top = src[y0 * width + x0] * (1 - fx) + src[y0 * width + x1] * fx;
  const bottom = src[y1 * width + x0] * (1 - fx) + src[y1 * width + x1] * fx;
  return top * (1 - fy) + bottom * fy;
}

/**
 * Refines `mask` along the edges of `image` (same size).
 * @example const refined = await refineMask(image, mask);
 */
export async function refineMask(image: RgbImage, mask: Mask, { radius, eps = 1e-3, maxWorkPixels = 4_000_000 }: RefineOptions = {}): Promise<Mask> {
  const { width, height } = image;
  const scale = Math.min(1, Math.sqrt(maxWorkPixels / (width * height)));
  const ww = Math.max(1, Math.round(width * scale));
  const wh = Math.max(1, Math.round(height * scale));
  const size: [number, number] | undefined = scale < 1 ? [ww, wh] : undefined;
  const r = Math.max(1, Math.round((radius ?? Math.max(4, (4 * Math.max(width, height)) / 1024)) * scale));

  const I = await plane(image.data, width, height, 3, size);
  const p = await plane(mask.data, width, height, 1, size);
  const n = I.length;
  const Ip = new Float32Array(n);
  const II = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    Ip[i] = I[i] * p[i];
    II[i] = I[i] * I[i];
  }
  const meanI = boxMean(I, ww, wh, r);
  const meanP = boxMean(p, ww, wh, r);
  const corrIp = boxMean(Ip, ww, wh, r);
  const corrII = boxMean(II, ww, wh, r);
  // Reuse the product buffers for the linear coefficients a and b of q = a·I + b.
  const a = Ip;
  const b = II;
  for (let i = 0; i < n; i++) {
    const variance = corrII[i] - meanI[i] * meanI[i];
    a[i] = (corrIp[i] - meanI[i] * meanP[i]) / (variance + eps);
    b[i] = meanP[i] - a[i] * meanI[i];
  }
  const meanA = boxMean(a, ww, wh, r);
  const meanB = boxMean(b, ww, wh, r);

  const guide = scale < 1 ? await plane(image.data, width, height, 3) : I;
  const out = new Uint8Array(width * height);
  for (let y = 0; y < height; y++) {
    const sy = (y + 0.5) * (wh / height) - 0.5;
    for (let x = 0; x < width; x++) {
      const i = y * width + x;
      let q: number;
      if (scale < 1) {
        const sx = (x + 0.5) * (ww / width) - 0.5;
        q = sample(meanA, ww, wh, sx, sy) * guide[i] + sample(meanB, ww, wh, sx, sy);
      } else {
        q = meanA[i] * guide[i] + meanB[i];
      }
      // Only pixels the model was unsure of change: certain ones stay, so no halo spreads outward.
      const m = mask.data[i];
      out[i] = m === 0 || m === 255 ? m : Math.round(Math.min(1, Math.max(0, q)) * 255);
    }
  }
  return { data: out, width, height };
}
