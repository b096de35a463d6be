import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import sharp from 'sharp'
import type { Mask } from '../src/imaging/types.js'

export const fixture = (name: string): Promise<Buffer> =>
  readFile(fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url)))

/**
 * Decodes a PNG: `channels` is what the file stores (from its header); `data` holds that many
 * channels (sharp would expand a greyscale PNG to RGB on raw output, so 1-channel ones are extracted).
 */
export async function rawPng(
  png: Uint8Array,
): Promise<{ data: Buffer; width: number; height: number; channels: number }> {
  const { channels = 0, width = 0, height = 0, format } = await sharp(png).metadata()
  if (format !== 'png') throw new Error(`expected a PNG, got ${format}`)
  const pipeline = channels === 1 ? sharp(png).extractChannel(0) : sharp(png)
  const { data, info } = await pipeline.raw().toBuffer({ resolveWithObject: true })
  if (info.channels !== channels) throw new Error(`decoded ${info.channels} channels from a ${channels}-channel PNG`)
  return { data, width, height, channels }
}

/** Mean absolute difference of two 8-bit planes, in 8-bit units. */
export function meanAbsDiff(a: Uint8Array, b: Uint8Array): number {
  if (a.length !== b.length) throw new Error(`length ${a.length} vs ${b.length}`)
  let sum = 0
  for (let i = 0; i < a.length; i++) sum += Math.abs(a[i] - b[i])
  return sum / a.length
}

/** A mask whose left half is 0 and right half 255 (a vertical edge between columns w/2-1 and w/2). */
export function stepMask(width: number, height: number): Mask {
  const data = new Uint8Array(width * height)
  for (let y = 0; y < height; y++) data.fill(255, y * width + width / 2, (y + 1) * width)
  return { data, width, height }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/**
 * Polls `probe` until it returns something truthy. For states a test waits on: how long they take
 * depends on the machine, so the deadline is generous and only reached when something is stuck.
 */
export async function waitFor<T>(
  probe: () => Promise<T | undefined | null | false>,
  what: string,
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value) return value
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await sleep(20)
  }
}
