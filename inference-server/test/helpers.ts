import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import type { Mask } from '../src/imaging/types.js';

export const fixture = (name: string): Promise<Buffer> => readFile(fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url)));

/** Decodes a PNG and returns its raw pixels and channel count, without any conversion. */
export async function rawPng(png: Uint8Array): Promise<{ data: Buffer; width: number; height: number; channels: number }> {
  const { data, info } = await sharp(png).raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height, channels: info.channels };
}

/** Mean absolute difference of two 8-bit planes, in 8-bit units. */
export function meanAbsDiff(a: Uint8Array, b: Uint8Array): number {
  if (a.length !== b.length) throw new Error(`length ${a.length} vs ${b.length}`);
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += Math.abs(a[i] - b[i]);
  return sum / a.length;
}

/** A mask whose left half is 0 and right half 255 (a vertical edge between columns w/2-1 and w/2). */
export function stepMask(width: number, height: number): Mask {
  const data = new Uint8Array(width * height);
  for (let y = 0; y < height; y++) data.fill(255, y * width + width / 2, (y + 1) * width);
  return { data, width, height };
}
