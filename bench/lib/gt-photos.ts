/** The real photos of ../shared/gt with their true alpha (issue 22), read where they lie, never copied. */
import { existsSync, readdirSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { sharp } from './deps.js'
import { ROOT } from './util.js'

/** Read at run time, never copied: the repository must not hold these photos (their README). GT_DIR
 * overrides it (a git worktree sits elsewhere than ../). */
export const GT_DIR = process.env.GT_DIR ?? `${ROOT}../shared/gt/`
export interface GtPhoto {
  name: string
  bytes: Uint8Array
  width: number
  height: number
  /** True alpha, 0..1 (channel 0 of the truth PNG). */
  alpha: Float32Array
}

/** The photos of GT_DIR whose name matches `only` (a regular expression; all by default), with their truth. */
export async function gtPhotos(only?: string): Promise<GtPhoto[]> {
  if (!existsSync(GT_DIR)) throw new Error(`no ground truth at ${GT_DIR} (see issue 22; GT_DIR sets it)`)
  const files = readdirSync(GT_DIR).filter((f) => /\.(png|jpg)$/.test(f) && !f.includes('.gt.'))
  const out: GtPhoto[] = []
  for (const file of files.sort()) {
    const name = file.replace(/\.(png|jpg)$/, '')
    if (only && !new RegExp(only).test(name)) continue
    const { data, info } = await sharp(`${GT_DIR}${name}.gt.png`)
      .extractChannel(0)
      .raw()
      .toBuffer({ resolveWithObject: true })
    const alpha = new Float32Array(data.length)
    for (let i = 0; i < data.length; i++) alpha[i] = data[i] / 255
    const bytes = new Uint8Array(await readFile(`${GT_DIR}${file}`))
    out.push({ name, bytes, width: info.width, height: info.height, alpha })
  }
  return out
}
