/**
 * Made photos for the mask confidence (issue 31), shared by the inference server's tests and the
 * Worker's (test/helpers/fixture-server.ts serves them at /generated/subject-<kind>.png): a grey
 * photo with a crisp dark square ("plain"), or a dark disc that fades into the grey over its
 * radius ("faded"), which the stub segmenter (its mask ramps with the distance from the border's
 * colour) and any model can only be unsure of.
 */
import sharp from 'sharp'

export type SubjectKind = 'plain' | 'faded'
const S = 256

export function madeSubject(kind: SubjectKind): Promise<Buffer> {
  const data = Buffer.alloc(S * S * 3, 200)
  for (let y = 0; y < S; y++)
    for (let x = 0; x < S; x++) {
      const d = Math.hypot(x - S / 2, y - S / 2) / (S / 3)
      const square = Math.abs(x - S / 2) < S / 4 && Math.abs(y - S / 2) < S / 4
      const dark = kind === 'plain' ? (square ? 1 : 0) : Math.max(0, 1 - d)
      // The plain square is far from the background; the faded disc stays within the stub's ramp.
      data.fill(Math.round(200 - (kind === 'plain' ? 160 : 40) * dark), (y * S + x) * 3, (y * S + x) * 3 + 3)
    }
  return sharp(data, { raw: { width: S, height: S, channels: 3 } })
    .png()
    .toBuffer()
}
