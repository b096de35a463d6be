/**
 * The cutout: the source RGB with the mask as its alpha channel, as raw RGBA.
 */
import type { Mask, RgbImage } from './types.js';

export interface RgbaImage {
  data: Uint8Array;
  width: number;
  height: number;
  channels: 4;
}

/**
 * Interleaves RGB and alpha. Colour is kept as is under transparent pixels (not premultiplied),
 * which is what PNG stores and what the reference package returns.
 * A typed-array pass rather than sharp's joinChannel: that silently yields 3 channels after
 * removeAlpha() (STACK.md), and this is one cheap copy either way.
 */
export function composeCutout(image: RgbImage, mask: Mask): RgbaImage {
  const { width, height } = image;
  if (mask.width !== width || mask.height !== height) {
    throw new Error(`Mask is ${mask.width}×${mask.height} but the image is ${width}×${height}`);
  }
  const src = image.data;
  const alpha = mask.data;
  const out = new Uint8Array(width * height * 4);
  for (let i = 0, j = 0, k = 0; k < alpha.length; i += 3, j += 4, k++) {
    out[j] = src[i];
    out[j + 1] = src[i + 1];
    out[j + 2] = src[i + 2];
    out[j + 3] = alpha[k];
  }
  return { data: out, width, height, channels: 4 };
}
