import { describe, expect, it } from 'vitest';
import { applyAlpha, featherMask, featherSigma, thresholdMask } from '../src/imaging/alpha.js';
import { stepMask } from './helpers.js';

const ramp = () => ({ data: Uint8Array.from({ length: 256 }, (_, i) => i), width: 16, height: 16 });

describe('thresholdMask', () => {
  it('makes alpha ≥ threshold opaque and the rest transparent', () => {
    const out = thresholdMask(ramp(), 0.5);
    expect(out.data[127]).toBe(0);
    expect(out.data[128]).toBe(255); // 128/255 ≥ 0.5
    expect(new Set(out.data)).toEqual(new Set([0, 255]));
  });
  it('keeps everything at 0 and only full opacity at 1', () => {
    expect(thresholdMask(ramp(), 0).data.every((v) => v === 255)).toBe(true);
    const one = thresholdMask(ramp(), 1).data;
    expect(one[255]).toBe(255);
    expect(one.slice(0, 255).every((v) => v === 0)).toBe(true);
  });
  it('does not modify its input', () => {
    const mask = ramp();
    thresholdMask(mask, 0.5);
    expect(mask.data[100]).toBe(100);
  });
});

describe('featherMask', () => {
  it('leaves the mask untouched at 0', async () => {
    const mask = stepMask(32, 8);
    expect(await featherMask(mask, 0)).toBe(mask);
  });

  it.each([1, 2, 4])('softens a hard edge over about ±%i source pixels and no further', async (radius) => {
    const width = 64;
    const out = await featherMask(stepMask(width, 8), radius);
    expect(out.data.length).toBe(width * 8); // still one channel
    const row = Array.from(out.data.subarray(3 * width, 4 * width));
    const edge = width / 2; // first opaque column
    // Inside the radius the edge is soft...
    expect(row[edge - 1]).toBeGreaterThan(0);
    expect(row[edge - 1]).toBeLessThan(255);
    expect(row[edge]).toBeGreaterThan(0);
    expect(row[edge]).toBeLessThan(255);
    // ...beyond it (3 sigma) the mask is as it was, to within a rounding step.
    for (let x = 0; x < edge - radius - 1; x++) expect(row[x]).toBeLessThanOrEqual(1);
    for (let x = edge + radius + 1; x < width; x++) expect(row[x]).toBeGreaterThanOrEqual(254);
    // and it is monotonic
    for (let x = 1; x < width; x++) expect(row[x]).toBeGreaterThanOrEqual(row[x - 1]);
  });

  it('uses sigma = radius / 3, never below sharp’s 0.3', () => {
    expect(featherSigma(3)).toBe(1);
    expect(featherSigma(0.5)).toBe(0.3);
  });
});

describe('applyAlpha', () => {
  it('raw keeps the soft values', async () => {
    const out = await applyAlpha(ramp(), { mode: 'raw', feather: 0 });
    expect(Array.from(out.data)).toEqual(Array.from(ramp().data));
  });
  it('binary makes a hard mask, then feathers it', async () => {
    const hard = await applyAlpha(ramp(), { mode: 'binary', threshold: 0.25, feather: 0 });
    expect(new Set(hard.data)).toEqual(new Set([0, 255]));
    const soft = await applyAlpha({ data: stepMask(32, 8).data.map((v) => (v ? 200 : 40)), width: 32, height: 8 }, { mode: 'binary', threshold: 0.5, feather: 2 });
    const values = new Set(soft.data);
    expect(values.has(0) && values.has(255)).toBe(true);
    expect(values.size).toBeGreaterThan(2);
  });
});
