/**
 * `fast`'s candidate methods for the ground-truth benchmark (issue 31): input sizes × finishes
 * (inference-server/src/levels/fast.ts), evaluated over cached model masks
 * (bench/lib/cached-segmenter.ts) with the finish's basis remembered per photo and size, so the grid
 * costs one model run per photo and size. quality-gt.ts checks that this composition gives exactly
 * levelAlpha's `fast` mask for the shipped defaults.
 */
import type { Mask, RgbImage } from '../../inference-server/src/imaging/types.js'
import {
  FAST_DEFAULTS,
  type FastOptions,
  type FinishBasis,
  fastInputFor,
  finishBasis,
  finishFast,
} from '../../inference-server/src/levels/fast.js'
import { UNSURE_BAND } from '../../inference-server/src/levels/bands.js'
import type { InputShape } from '../../inference-server/src/levels/sizes.js'
import type { Segmenter } from '../../inference-server/src/segmentation/index.js'

/**
 * The inputs `fast` may choose from: at most 0.45 of the native 1024²'s pixels, so that with the
 * model's fixed costs it stays ≥ 2× faster at the model (measured in the same run: timeInputs).
 * 704² (0.47) is scored beside them (FAST_REFERENCE) but not chosen from: it measured 1.9–2.2×.
 */
export const FAST_SIZES: Array<{ side: number; shape: InputShape }> = [
  { side: 640, shape: 'square' },
  { side: 704, shape: 'lean' },
]
export const FAST_REFERENCE: Array<{ side: number; shape: InputShape }> = [{ side: 704, shape: 'square' }]

const STRETCHES = [0, 16, 32, 48].flatMap((lo) => [128, 160, 192].map((hi) => ({ lo, hi })))
const FAINTS = [
  { ...UNSURE_BAND, share: 0.8 },
  { ...UNSURE_BAND, share: 0.5 },
]

export const sizeKey = (o: { side: number; shape: InputShape }) => `${o.shape}${o.side}`
const edgeKey = (f: NonNullable<FastOptions['faint']>) => (f.edge ? `-${f.edge.method}${f.edge.steps}` : '')
export const fastKey = (o: FastOptions) =>
  `${sizeKey(o)}|${o.faint ? `faint${o.faint.low}-${o.faint.high}-${o.faint.share}${edgeKey(o.faint)}` : 'faint-'}|${o.stretch ? `stretch${o.stretch.lo}-${o.stretch.hi}` : 'stretch-'}`

/**
 * The grid, the unfinished 640² first (issue 22's `fast`: choose() keeps the earlier key on a tie).
 * @example Object.keys(fastCandidates(FAST_SIZES))[0] // 'square640|faint-|stretch-'
 */
export function fastCandidates(sizes = FAST_SIZES): Record<string, FastOptions> {
  const out: Record<string, FastOptions> = {}
  for (const size of sizes)
    for (const faint of [null, ...FAINTS])
      for (const stretch of [null, ...STRETCHES]) {
        // The faint pass with the stretch: only the stretches near the in-sample best, to keep the grid small.
        if (faint && stretch && !(stretch.lo === 32 && stretch.hi <= 160)) continue
        const o: FastOptions = { ...size, faint, stretch }
        out[fastKey(o)] = o
      }
  // The raised border drawn by the matting solve (raise-edge.ts, session 12), with the stretch
  // nearest the in-sample best only: each costs a solve per photo.
  for (const size of sizes)
    for (const faint of FAINTS) {
      const o: FastOptions = {
        ...size,
        faint: { ...faint, edge: { method: 'matte', steps: 1 } },
        stretch: { lo: 32, hi: 160 },
      }
      out[fastKey(o)] = o
    }
  return out
}

/** One photo's memo: the model's mask and the finish's basis (working-size mask, colour cut) per input size. */
export function fastEvaluator(segmenter: Segmenter, image: RgbImage) {
  const masks = new Map<string, Promise<Mask>>()
  const bases = new Map<string, Promise<FinishBasis>>()
  return async function fastAlpha(o: FastOptions = FAST_DEFAULTS): Promise<Mask> {
    const k = sizeKey(o)
    const input = fastInputFor(image, segmenter.input, o)
    if (!masks.has(k)) masks.set(k, segmenter.segment(image, input))
    const mask = await (masks.get(k) as Promise<Mask>)
    // The server's finish (fastMask: working size = the input's pixels), its basis kept per size.
    const pixels = input.width * input.height
    if (o.faint && !bases.has(k)) bases.set(k, finishBasis(image, mask, pixels))
    return finishFast(image, mask, o, pixels, o.faint ? await bases.get(k) : undefined)
  }
}
