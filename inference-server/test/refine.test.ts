import { describe, expect, it } from 'vitest';
import { boxMean, refineMask } from '../src/imaging/refine.js';

describe('boxMean', () => {
  it('averages a clipped window', () => {
    const src = Float32Array.from([0, 0, 3, 0, 0]);
    expect(Array.from(boxMean(src, 5, 1, 1))).toEqual([0, 1, 1, 1, 0]);
    const flat = new Float32Array(12).fill(0.25);
    expect(Array.from(boxMean(flat, 4, 3, 2)).every((v) => Math.abs(v - 0.25) < 1e-6)).toBe(true);
  });
});

describe('refineMask', () => {
  // A photo with a sharp vertical edge at x = 1000 and a mask as soft as an upscaled model mask.
  const width = 2048;
  const height = 64;
  const edge = 1000;
  const image = { data: new Uint8Array(width * height * 3), width, height, channels: 3 as const };
  const mask = { data: new Uint8Array(width * height), width, height };
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      image.data.fill(x >= edge ? 220 : 30, (y * width + x) * 3, (y * width + x) * 3 + 3);
      mask.data[y * width + x] = Math.round(Math.min(1, Math.max(0, (x - edge + 8) / 16)) * 255);
    }
  }
  /** Mean distance of one row from the ideal hard edge at the image edge. */
  const edgeError = (data: Uint8Array) => {
    let sum = 0;
    for (let x = 0; x < width; x++) sum += Math.abs(data[32 * width + x] - (x >= edge ? 255 : 0));
    return sum / width;
  };

  it('pulls a soft mask edge onto the image edge and leaves flat areas alone', async () => {
    const refined = await refineMask(image, mask);
    expect(refined.data.length).toBe(width * height);
    expect(edgeError(refined.data)).toBeLessThan(edgeError(mask.data) * 0.8);
    const row = refined.data.subarray(32 * width, 33 * width);
    // The steepest step is now at the image edge, not spread evenly over the ramp.
    expect(row[edge] - row[edge - 1]).toBeGreaterThan(100);
    expect(row[edge - 8]).toBe(0);
    expect(row[edge + 8]).toBe(255);
    expect(row[10]).toBe(0);
    expect(row[width - 10]).toBe(255);
  });

  it('gives the same result through the subsampled (fast guided filter) path', async () => {
    const refined = await refineMask(image, mask, { maxWorkPixels: (width * height) / 4 });
    expect(edgeError(refined.data)).toBeLessThan(edgeError(mask.data) * 0.8);
    const row = refined.data.subarray(32 * width, 33 * width);
    expect(row[10]).toBe(0);
    expect(row[width - 10]).toBe(255);
  });
});
