/**
 * Model profiles (issue 25) through `/v1/remove`, without any model's weights: for each profile a
 * tiny graph with that model's published I/O signature (tiny-graphs.ts) is served, and its masks
 * must equal the model's reference pre- and post-processing, restated here from the cited
 * references (not read from profiles.ts) and computed independently (MAD ≤ 1/255), for the mask
 * and the cutout at every level. Then recognition, mismatches, per-level models and memory.
 */
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RemoveRequest } from '../../src/contract/options.js'
import type { RgbImage } from '../src/imaging/types.js'
import type { Quality } from '../src/options.js'
import { removeBackground } from '../src/remove.js'
import type { InputSize, ModelInput, Segmenter } from '../src/segmentation/index.js'
import { planSession } from '../src/segmentation/model.js'
import { createLevelSegmenters, levelModelsFromEnv } from '../src/segmentation/per-level.js'
import { PROFILES } from '../src/segmentation/profiles.js'
import { candidates, type GraphInfo, recognize } from '../src/segmentation/recognize.js'
import { createApp } from '../src/server.js'
import { meanAbsDiff, postJob, rawPng, removeParts } from './helpers.js'
import { rememberMasks } from './remembered-masks.js'
import { ISNET_GENERAL_USE, removeTinyGraphs, type TinySignature, writeTinyGraph } from './tiny-graphs.js'

const KEY = 'profiles-test-key'
const IMAGENET_MEAN = [0.485, 0.456, 0.406]
const IMAGENET_STD = [0.229, 0.224, 0.225]

/** A reference's processing, restated from its source (the profile entry cites the same). */
interface Reference {
  kernel: 'imgly' | 'bilinear' | 'bicubic' | 'lanczos' | 'box' | 'torch'
  /** The mask's kernel back to the photo, when not `kernel`. */
  back?: Reference['kernel']
  /** Divide by 255, or by the resized image's maximum (rembg's normalize). */
  scale: 255 | 'max'
  mean: number[]
  std: number[]
  activation: Array<'sigmoid' | 'minmax'>
  /** The model input for a photo of this size. */
  size: (width: number, height: number) => InputSize
}

const square = (side: number) => () => ({ width: side, height: side })
/** rembg's sessions: LANCZOS both ways, ÷ max, the given mean/std, min-max (BiRefNet: sigmoid first). */
const rembg = (mean: number[], std: number[], side: number, activation: Reference['activation']): Reference => ({
  kernel: 'lanczos',
  scale: 'max',
  mean,
  std,
  activation,
  size: square(side),
})
/** MODNet's onnx/inference_onnx.py get_scale_factor (ref_size 512, multiples of 32). */
function modnetSize(w: number, h: number): InputSize {
  let rw = w
  let rh = h
  if (Math.max(h, w) < 512 || Math.min(h, w) > 512) {
    if (w >= h) [rh, rw] = [512, Math.trunc((w / h) * 512)]
    else [rw, rh] = [512, Math.trunc((h / w) * 512)]
  }
  return { width: rw - (rw % 32), height: rh - (rh % 32) }
}

const birefnetGraph: Omit<TinySignature, 'inputShape'> = {
  inputName: 'input_image',
  outputNames: ['output_image'],
  outputIndex: 0,
  gain: 1,
  bias: 0,
}
const U2NET_OUTPUTS = ['1959', '1960', '1961', '1962', '1963', '1964', '1965']

/** Each profile: its graph's published signature, and its reference processing. */
const CASES: Array<{ profile: string; graph: TinySignature; ref: Reference }> = [
  {
    profile: 'isnet-imgly',
    // The built-in graph made size-agnostic (size-agnostic.ts): symbolic height and width.
    graph: {
      inputName: 'input',
      inputShape: [1, 3, 'height', 'width'],
      outputNames: ['output'],
      outputIndex: 0,
      gain: 1,
      bias: 0.25,
    },
    ref: { kernel: 'imgly', scale: 255, mean: [], std: [], activation: [], size: square(1024) },
  },
  {
    profile: 'isnet-general-use',
    graph: ISNET_GENERAL_USE,
    ref: rembg([0.5, 0.5, 0.5], [1, 1, 1], 1024, ['minmax']),
  },
  {
    profile: 'isnet-anime',
    graph: {
      inputName: 'img',
      inputShape: [1, 3, 1024, 1024],
      outputNames: ['mask'],
      outputIndex: 0,
      gain: 1,
      bias: 0,
    },
    ref: rembg(IMAGENET_MEAN, [1, 1, 1], 1024, ['minmax']),
  },
  ...['birefnet-general', 'birefnet-general-lite', 'birefnet-portrait', 'birefnet-dis', 'birefnet-massive'].map(
    (profile, i) => ({
      profile,
      // Some exports keep the batch dynamic.
      graph: { ...birefnetGraph, inputShape: [i % 2 ? 'batch_size' : 1, 3, 1024, 1024] },
      ref: rembg(IMAGENET_MEAN, IMAGENET_STD, 1024, ['sigmoid', 'minmax']),
    }),
  ),
  {
    profile: 'birefnet-hr',
    graph: { ...birefnetGraph, inputShape: [1, 3, 2048, 2048] },
    // Model card: torchvision Resize in, `pred_pil.resize(image.size)` (PIL's default, bicubic) out.
    ref: {
      kernel: 'bilinear',
      back: 'bicubic',
      scale: 255,
      mean: IMAGENET_MEAN,
      std: IMAGENET_STD,
      activation: ['sigmoid'],
      size: square(2048),
    },
  },
  {
    profile: 'rmbg-1.4',
    graph: {
      inputName: 'input',
      inputShape: ['batch_size', 3, 1024, 1024],
      outputNames: ['output'],
      outputIndex: 0,
      gain: 1,
      bias: 0,
    },
    // utilities.py: F.interpolate(…, mode='bilinear') both ways.
    ref: {
      kernel: 'torch',
      scale: 255,
      mean: [0.5, 0.5, 0.5],
      std: [1, 1, 1],
      activation: ['minmax'],
      size: square(1024),
    },
  },
  {
    profile: 'rmbg-2.0',
    graph: {
      inputName: 'pixel_values',
      inputShape: ['batch_size', 3, 1024, 1024],
      outputNames: ['alphas'],
      outputIndex: 0,
      gain: 0.3,
      bias: 0.1,
    },
    ref: {
      kernel: 'bilinear',
      back: 'bicubic',
      scale: 255,
      mean: IMAGENET_MEAN,
      std: IMAGENET_STD,
      activation: [],
      size: square(1024),
    },
  },
  {
    profile: 'u2net',
    graph: {
      inputName: 'input.1',
      inputShape: [1, 3, 320, 320],
      outputNames: U2NET_OUTPUTS,
      outputIndex: 0,
      gain: 1,
      bias: 0,
    },
    ref: rembg(IMAGENET_MEAN, IMAGENET_STD, 320, ['minmax']),
  },
  {
    profile: 'u2netp',
    graph: {
      inputName: 'input.1',
      inputShape: [1, 3, 320, 320],
      outputNames: U2NET_OUTPUTS,
      outputIndex: 0,
      gain: 1,
      bias: 0,
    },
    ref: rembg(IMAGENET_MEAN, IMAGENET_STD, 320, ['minmax']),
  },
  {
    profile: 'modnet',
    graph: {
      inputName: 'input',
      inputShape: ['batch_size', 3, 'height', 'width'],
      outputNames: ['output'],
      outputIndex: 0,
      gain: 0.4,
      bias: 0.2,
    },
    ref: { kernel: 'box', scale: 255, mean: [0.5, 0.5, 0.5], std: [0.5, 0.5, 0.5], activation: [], size: modnetSize },
  },
]

// ---- The references, computed directly (float resampling without 8-bit rounding between passes).

const sinc = (x: number) => (x === 0 ? 1 : Math.sin(Math.PI * x) / (Math.PI * x))
const KERNELS = {
  bilinear: { support: 1, f: (x: number) => Math.max(0, 1 - Math.abs(x)) },
  lanczos: { support: 3, f: (x: number) => (Math.abs(x) < 3 ? sinc(x) * sinc(x / 3) : 0) },
  box: { support: 0.5, f: (x: number) => (x > -0.5 && x <= 0.5 ? 1 : 0) },
  // Pillow's bicubic_filter, a = −0.5.
  bicubic: {
    support: 2,
    f: (x: number) => {
      const t = Math.abs(x)
      return t < 1 ? 1.5 * t ** 3 - 2.5 * t ** 2 + 1 : t < 2 ? -0.5 * t ** 3 + 2.5 * t ** 2 - 4 * t + 2 : 0
    },
  },
}

/** Pillow's weights for output index i of an axis going from n to m pixels: [source index, weight][]. */
function pilWeights(n: number, m: number, i: number, kernel: keyof typeof KERNELS): Array<[number, number]> {
  const scale = n / m
  const stretch = Math.max(1, scale)
  const centre = (i + 0.5) * scale
  const support = KERNELS[kernel].support * stretch
  const out: Array<[number, number]> = []
  for (
    let j = Math.max(0, Math.trunc(centre - support + 0.5));
    j < Math.min(n, Math.trunc(centre + support + 0.5));
    j++
  )
    out.push([j, KERNELS[kernel].f((j - centre + 0.5) / stretch)])
  const sum = out.reduce((a, [, w]) => a + w, 0)
  return out.map(([j, w]) => [j, w / sum])
}

/** PyTorch's F.interpolate(mode='bilinear', align_corners=False) along one axis (upsample_bilinear2d). */
function torchWeights(n: number, m: number, i: number): Array<[number, number]> {
  const src = Math.max(0, (i + 0.5) * (n / m) - 0.5)
  const x0 = Math.min(Math.floor(src), n - 1)
  const x1 = Math.min(x0 + 1, n - 1)
  const l = src - x0
  return x0 === x1
    ? [[x0, 1]]
    : [
        [x0, 1 - l],
        [x1, l],
      ]
}

/** The reference package's bilinear (top-left aligned), taps and weight of output index i. */
function imglyWeights(n: number, m: number, i: number): Array<[number, number]> {
  const src = i * (n / m)
  const lo = Math.max(Math.floor(src), 0)
  const hi = Math.min(Math.ceil(src), n - 1)
  return lo === hi
    ? [[lo, 1]]
    : [
        [lo, 1 - (src - lo)],
        [hi, src - lo],
      ]
}

/** One axis's taps as flat arrays: `taps` source indices and weights per output index (zero-padded). */
function axisTaps(n: number, m: number, kernel: Reference['kernel']) {
  const lists = Array.from({ length: m }, (_, i) =>
    n === m
      ? [[i, 1] as [number, number]]
      : kernel === 'imgly'
        ? imglyWeights(n, m, i)
        : kernel === 'torch'
          ? torchWeights(n, m, i)
          : pilWeights(n, m, i, kernel),
  )
  const taps = Math.max(...lists.map((l) => l.length))
  const index = new Int32Array(m * taps)
  const weight = new Float64Array(m * taps)
  for (const [i, l] of lists.entries()) {
    for (const [k, [j, w]] of l.entries()) {
      index[i * taps + k] = j
      weight[i * taps + k] = w
    }
  }
  return { taps, index, weight }
}

function refResize(
  src: ArrayLike<number>,
  w: number,
  h: number,
  ch: number,
  W: number,
  H: number,
  kernel: Reference['kernel'],
) {
  const xs = axisTaps(w, W, kernel)
  const rows = new Float64Array(W * h * ch)
  for (let y = 0; y < h; y++)
    for (let x = 0; x < W; x++)
      for (let c = 0; c < ch; c++) {
        let v = 0
        for (let k = 0; k < xs.taps; k++)
          v += xs.weight[x * xs.taps + k] * src[(y * w + xs.index[x * xs.taps + k]) * ch + c]
        rows[(y * W + x) * ch + c] = v
      }
  const ys = axisTaps(h, H, kernel)
  const out = new Uint8Array(W * H * ch)
  const stride = W * ch
  const acc = new Float64Array(stride)
  for (let y = 0; y < H; y++) {
    acc.fill(0)
    for (let k = 0; k < ys.taps; k++) {
      const wt = ys.weight[y * ys.taps + k]
      if (wt === 0) continue
      const from = ys.index[y * ys.taps + k] * stride
      for (let i = 0; i < stride; i++) acc[i] += wt * rows[from + i]
    }
    for (let i = 0; i < stride; i++) out[y * stride + i] = Math.min(255, Math.max(0, Math.round(acc[i])))
  }
  return out
}

/** The reference mask of `image` for a graph computing mean(|x|) × gain + bias, run at `size`. */
function referenceMask(ref: Reference, graph: TinySignature, image: RgbImage, size: InputSize): Uint8Array {
  const rgb = refResize(image.data, image.width, image.height, 3, size.width, size.height, ref.kernel)
  // Plain loops: this runs on 1–4 M pixels per case, where callbacks and destructuring cost seconds.
  let max = 255
  if (ref.scale === 'max') {
    max = 0
    for (let i = 0; i < rgb.length; i++) if (rgb[i] > max) max = rgb[i]
    max = Math.max(1e-6, max)
  }
  const imgly = ref.kernel === 'imgly'
  const plane = new Float64Array(size.width * size.height)
  for (let i = 0; i < plane.length; i++) {
    let sum = 0
    for (let c = 0; c < 3; c++) {
      const x = imgly ? (rgb[i * 3 + c] - 128) / 256 : (rgb[i * 3 + c] / max - ref.mean[c]) / ref.std[c]
      sum += Math.abs(Math.fround(x))
    }
    plane[i] = (sum / 3) * graph.gain + graph.bias
  }
  for (const step of ref.activation) {
    if (step === 'sigmoid') {
      for (let i = 0; i < plane.length; i++) plane[i] = 1 / (1 + Math.exp(-plane[i]))
    } else {
      let lo = Infinity
      let hi = -Infinity
      for (let i = 0; i < plane.length; i++) {
        lo = Math.min(lo, plane[i])
        hi = Math.max(hi, plane[i])
      }
      for (let i = 0; i < plane.length; i++) plane[i] = (plane[i] - lo) / (hi - lo)
    }
  }
  const small = new Uint8Array(plane.length)
  for (let i = 0; i < plane.length; i++) small[i] = Math.trunc(Math.min(1, Math.max(0, plane[i])) * 255)
  return refResize(small, size.width, size.height, 1, image.width, image.height, ref.back ?? ref.kernel)
}

/**
 * A segmenter computing the reference, to run the levels' own steps (views, matting) on. Masks are
 * remembered by the image's pixels and the size, as the levels ask for the same ones again.
 */
function referenceSegmenter(ref: Reference, graph: TinySignature, input: ModelInput): Segmenter {
  const seen = new Map<string, Uint8Array>()
  return {
    version: 'reference',
    input,
    async segment(image, size) {
      const at = input.kind === 'any' && size ? size : ref.size(image.width, image.height)
      const key = `${at.width}x${at.height}:${Buffer.from(image.data).toString('base64')}`
      const data = seen.get(key) ?? referenceMask(ref, graph, image, at)
      seen.set(key, data)
      return { data, width: image.width, height: image.height }
    },
    close: async () => {},
  }
}

// ---- The photo: a warm subject on a cool, darker background, with a gradient, 48×36.

const W = 48
const H = 36
function photo(): RgbImage {
  const data = new Uint8Array(W * H * 3)
  for (let y = 0; y < H; y++)
    for (let x = 0; x < W; x++) {
      const inside = (x - 26) ** 2 / 170 + (y - 18) ** 2 / 90 < 1
      const i = (y * W + x) * 3
      data[i] = inside ? 230 - y * 2 : 20 + x
      data[i + 1] = inside ? 150 + x : 60 + y * 3
      data[i + 2] = inside ? 40 : 200 - x * 2
    }
  return { data, width: W, height: H, channels: 3 }
}
let png: Uint8Array
const image = photo()

const options = (quality: Quality, output: 'mask' | 'cutout'): RemoveRequest => ({
  quality,
  alpha: { mode: 'raw', feather: 0 },
  output,
})

/** The served result's alpha: the mask itself, or the cutout's fourth channel. */
async function servedAlpha(segmenter: Segmenter, quality: Quality, output: 'mask' | 'cutout') {
  const app = createApp({ signingKey: KEY, model: { current: segmenter } })
  const answer = await postJob(app, KEY, '/v1/remove', removeParts(png, options(quality, output)))
  expect(answer.error).toBeUndefined()
  const decoded = await rawPng(answer.outputs[0].bytes)
  const alpha = output === 'mask' ? decoded.data : Uint8Array.from({ length: W * H }, (_, i) => decoded.data[i * 4 + 3])
  return { alpha: new Uint8Array(alpha), modelVersion: answer.done?.modelVersion }
}

beforeAll(async () => {
  png = new Uint8Array(
    await sharp(image.data, { raw: { width: W, height: H, channels: 3 } })
      .png()
      .toBuffer(),
  )
})

const started: Segmenter[] = []
afterAll(async () => {
  await Promise.all(started.map((s) => s.close()))
  await removeTinyGraphs()
})

async function serve(graph: TinySignature, profile?: string, name?: string) {
  const path = await writeTinyGraph(graph, name)
  const segmenter = await createLevelSegmenters(
    levelModelsFromEnv({ SEGMENTATION_MODEL: path, SEGMENTATION_PROFILE: profile }),
  )
  started.push(segmenter)
  return { path, segmenter }
}

describe('every profile: the served mask is its reference processing', () => {
  it('covers every profile', () => {
    expect(CASES.map((c) => c.profile).sort()).toEqual(PROFILES.map((p) => p.name).sort())
  })

  it.each(CASES)('$profile: mask and cutout at fast, balanced and high', async ({ profile, graph, ref }) => {
    // The cutout's request finds the masks its level's mask request made (remembered-masks.ts).
    const segmenter = rememberMasks((await serve(graph, profile)).segmenter)
    expect(segmenter.version).toMatch(new RegExp(`^${profile}:model\\.onnx@sha256:[0-9a-f]{12}$`))
    const reference = referenceSegmenter(ref, graph, segmenter.input)
    const direct = referenceMask(ref, graph, image, ref.size(W, H))
    // Not a flat mask: the comparison has something to disagree on.
    expect(Math.max(...direct) - Math.min(...direct)).toBeGreaterThan(40)
    for (const quality of ['fast', 'balanced', 'high'] as const) {
      // The level's own steps (views, matting) run on the reference segmenter.
      const expected = await rawPng((await removeBackground(reference, png, options(quality, 'mask'))).png)
      if (quality === 'balanced') expect(meanAbsDiff(expected.data, direct)).toBe(0)
      for (const output of ['mask', 'cutout'] as const) {
        const served = await servedAlpha(segmenter, quality, output)
        expect(served.modelVersion).toBe(segmenter.version)
        expect(meanAbsDiff(served.alpha, expected.data), `${quality} ${output}`).toBeLessThanOrEqual(1)
      }
    }
  })

  it('the comparison tells a wrong mean, kernel, division, activation or output apart', async () => {
    const { graph, ref } = CASES.find((c) => c.profile === 'isnet-anime')!
    const { segmenter } = await serve(graph, 'isnet-anime')
    const served = (await servedAlpha(segmenter, 'balanced', 'mask')).alpha
    const at = ref.size(W, H)
    const wrong: Reference[] = [
      { ...ref, mean: [0.5, 0.5, 0.5] },
      { ...ref, kernel: 'bilinear' },
      { ...ref, scale: 255 },
      { ...ref, activation: ['sigmoid', 'minmax'] },
    ]
    for (const r of wrong) expect(meanAbsDiff(served, referenceMask(r, graph, image, at))).toBeGreaterThan(1)
    // RMBG-1.4's F.interpolate samples where PIL's bilinear averages.
    const rmbg = CASES.find((c) => c.profile === 'rmbg-1.4')!
    const { segmenter: bria } = await serve(rmbg.graph, 'rmbg-1.4')
    const briaMask = (await servedAlpha(bria, 'balanced', 'mask')).alpha
    const pil = referenceMask({ ...rmbg.ref, kernel: 'bilinear' }, rmbg.graph, image, at)
    expect(meanAbsDiff(briaMask, pil)).toBeGreaterThan(1)
    const r2 = CASES.find((c) => c.profile === 'rmbg-2.0')!
    const { segmenter: bria2 } = await serve(r2.graph, 'rmbg-2.0')
    const bria2Mask = (await servedAlpha(bria2, 'balanced', 'mask')).alpha
    // RMBG-2.0's mask goes back to the photo with PIL's bicubic: on a smooth mask a bilinear one
    // stays within the 1/255 tolerance, so compare distances: 20× closer to the bicubic reference.
    const bicubicBack = meanAbsDiff(bria2Mask, referenceMask(r2.ref, r2.graph, image, at))
    const bilinearBack = meanAbsDiff(bria2Mask, referenceMask({ ...r2.ref, back: undefined }, r2.graph, image, at))
    expect(bilinearBack).toBeGreaterThan(20 * bicubicBack)
    // U²-Net's mask is its first output; the others (here −mean) would give another mask.
    const u2 = CASES.find((c) => c.profile === 'u2net')!
    const other = await serve({ ...u2.graph, outputIndex: 3 }, 'u2net')
    const fromSide = (await servedAlpha(other.segmenter, 'balanced', 'mask')).alpha
    const { segmenter: right } = await serve(u2.graph, 'u2net')
    expect(meanAbsDiff((await servedAlpha(right, 'balanced', 'mask')).alpha, fromSide)).toBeGreaterThan(1)
  })
})

describe('recognition', () => {
  const info = (over: Partial<GraphInfo>): GraphInfo => ({
    inputName: 'input.1',
    inputShape: [1, 3, 320, 320],
    inputType: 1,
    outputNames: U2NET_OUTPUTS,
    paramsM: 44,
    ...over,
  })

  it('tells graphs with the same I/O apart by their weight count', () => {
    expect(recognize(info({}), 'u2net.onnx').name).toBe('u2net')
    expect(recognize(info({ paramsM: 1.1 }), 'u2netp.onnx').name).toBe('u2netp')
    const birefnet = info({ inputName: 'input_image', inputShape: [1, 3, 1024, 1024], outputNames: ['output_image'] })
    expect(candidates({ ...birefnet, paramsM: 44 }).map((p) => p.name)).toContain('birefnet-general-lite')
    expect(candidates({ ...birefnet, paramsM: 220 }).map((p) => p.name)).toEqual([
      'birefnet-general',
      'birefnet-portrait',
      'birefnet-dis',
      'birefnet-massive',
    ])
  })

  it('recognises a graph by its signature without SEGMENTATION_PROFILE', async () => {
    for (const profile of ['rmbg-2.0', 'birefnet-hr']) {
      const { graph } = CASES.find((c) => c.profile === profile)!
      const plan = await planSession({ modelPath: await writeTinyGraph(graph) })
      expect(plan.profile.name).toBe(profile)
    }
  })

  it('runs an ISNet export at another multiple of 64 at its own size, and refuses one that is not', async () => {
    const graph = (side: number): TinySignature => ({
      ...CASES.find((c) => c.profile === 'isnet-general-use')!.graph,
      inputShape: [1, 3, side, side],
    })
    const plan = await planSession({ modelPath: await writeTinyGraph(graph(704)), profile: 'isnet-general-use' })
    expect(plan.input).toEqual({ kind: 'static', native: { width: 704, height: 704 } })
    await expect(
      planSession({ modelPath: await writeTinyGraph(graph(700)), profile: 'isnet-general-use' }),
    ).rejects.toThrow(/its input is 700×700, but isnet-general-use takes sides that are multiples of 64/)
  })

  it('refuses a graph that matches several profiles, naming them', async () => {
    const { graph } = CASES.find((c) => c.profile === 'birefnet-portrait')!
    await expect(planSession({ modelPath: await writeTinyGraph(graph) })).rejects.toThrow(
      /looks like isnet-general-use, isnet-anime, birefnet-general, birefnet-general-lite, birefnet-portrait, birefnet-dis, birefnet-massive \(input input_image \[1, 3, 1024, 1024\].*set SEGMENTATION_PROFILE to the one it is\. The profiles are isnet-imgly, isnet-general-use, .*modnet\./,
    )
  })

  it('refuses an unknown graph, listing the profiles', async () => {
    const path = await writeTinyGraph({
      inputName: 'x',
      inputShape: [1, 3, 500, 500],
      outputNames: ['y'],
      outputIndex: 0,
      gain: 1,
      bias: 0,
    })
    await expect(planSession({ modelPath: path })).rejects.toThrow(
      /model\.onnx matches no profile \(input x \[1, 3, 500, 500\], outputs y, 0\.0 M weights\)\. The profiles are isnet-imgly, .*u2netp, modnet; if it is one of them, set SEGMENTATION_PROFILE/,
    )
  })

  it('refuses a profile the graph does not fit, saying why and what it looks like', async () => {
    const { graph } = CASES.find((c) => c.profile === 'u2net')!
    const path = await writeTinyGraph(graph)
    await expect(planSession({ modelPath: path, profile: 'birefnet-general' })).rejects.toThrow(
      /does not fit profile birefnet-general: its input is 320×320, but birefnet-general takes 1024×1024 .* It looks like u2net or u2netp\. The profiles are isnet-imgly, /,
    )
    const modnet = await writeTinyGraph(CASES.find((c) => c.profile === 'modnet')!.graph)
    await expect(planSession({ modelPath: modnet, profile: 'u2net' })).rejects.toThrow(
      /it has 1 outputs, but u2net has 7/,
    )
    await expect(planSession({ profile: 'u2net' })).rejects.toThrow(
      'SEGMENTATION_PROFILE=u2net needs SEGMENTATION_MODEL: the built-in model is isnet-imgly',
    )
    await expect(planSession({ modelPath: path, profile: 'u2net-large' })).rejects.toThrow(
      /Unknown segmentation profile u2net-large: the profiles are isnet-imgly, /,
    )
  })

  /** Starts the real entry point with `env` and returns its exit code and stderr. */
  async function start(env: Record<string, string>): Promise<{ code: unknown; stderr: string }> {
    const main = fileURLToPath(new URL('../src/main.ts', import.meta.url))
    const child = spawn(process.execPath, ['--import', 'tsx', main], {
      env: { ...process.env, INFERENCE_SIGNING_KEY: 'k', PORT: '0', ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    let stderr = ''
    child.stderr.on('data', (d) => (stderr += d))
    const code = await new Promise((resolve) => child.on('exit', resolve))
    return { code, stderr }
  }

  it('stops the server at start on an unknown graph and on a mismatched profile', async () => {
    const unknown = await writeTinyGraph({
      inputName: 'x',
      inputShape: [1, 1, 64, 64],
      outputNames: ['y'],
      outputIndex: 0,
      gain: 1,
      bias: 0,
    })
    const first = await start({ SEGMENTATION_MODEL: unknown })
    expect(first.code).toBe(1)
    expect(first.stderr).toMatch(/matches no profile \(input x \[1, 1, 64, 64\].*The profiles are isnet-imgly, /)
    const u2net = await writeTinyGraph(CASES.find((c) => c.profile === 'u2net')!.graph)
    const second = await start({ SEGMENTATION_MODEL_HIGH: u2net, SEGMENTATION_PROFILE_HIGH: 'modnet' })
    expect(second.code).toBe(1)
    expect(second.stderr).toMatch(
      /does not fit profile modnet: its input is fixed at 320×320, but modnet sizes each photo/,
    )
  })
})

describe('a model per level', () => {
  it('runs each level on its own model, loads a shared one once, and reports each version', async () => {
    const byName = (p: string) => CASES.find((c) => c.profile === p)!
    const u2 = await writeTinyGraph(byName('u2netp').graph)
    const rmbg = await writeTinyGraph(byName('rmbg-2.0').graph)
    const segmenter = await createLevelSegmenters(
      levelModelsFromEnv({
        SEGMENTATION_MODEL: rmbg,
        SEGMENTATION_MODEL_FAST: u2,
        SEGMENTATION_PROFILE_FAST: 'u2netp',
      }),
    )
    started.push(segmenter)
    expect(segmenter.forLevel?.('balanced')).toBe(segmenter.forLevel?.('high'))
    expect(segmenter.forLevel?.('fast').version).toMatch(/^u2netp:/)
    expect(segmenter.version).toMatch(/^rmbg-2\.0:/)
    for (const [quality, profile] of [
      ['fast', 'u2netp'],
      ['balanced', 'rmbg-2.0'],
    ] as const) {
      const { graph, ref } = byName(profile)
      const served = await servedAlpha(segmenter, quality, 'mask')
      expect(served.modelVersion).toMatch(new RegExp(`^${profile.replace('.', '\\.')}:`))
      expect(meanAbsDiff(served.alpha, referenceMask(ref, graph, image, ref.size(W, H)))).toBeLessThanOrEqual(1)
    }
  })

  it('refuses models that do not fit in memory, before loading any', async () => {
    const rmbg = await writeTinyGraph(CASES.find((c) => c.profile === 'rmbg-2.0')!.graph)
    await expect(
      createLevelSegmenters(levelModelsFromEnv({ SEGMENTATION_MODEL: rmbg }), {
        sessions: 2,
        memoryBudget: 100 * 2 ** 20,
      }),
    ).rejects.toThrow(
      /do not fit: rmbg-2\.0:model\.onnx@sha256:[0-9a-f]{12} ~2000 MB \(2 sessions each\) need ~2000 MB, more than the 100 MB budget/,
    )
  })
})
