/**
 * @module
 * Which profile a model file is (issue 25): read from its graph (the image input's name, rank,
 * channels, type and spatial size, the outputs, the weight count), or named with
 * `SEGMENTATION_PROFILE` and then checked against the graph. Any doubt stops the start with a
 * message that lists the profiles, rather than a model run with the wrong pre-processing.
 */
import onnxProto from 'onnx-proto'
import { decodeModel } from './graph.js'
import { type ModelProfile, PROFILES, profileByName, profileNames } from './profiles.js'

const FLOAT = onnxProto.onnx.TensorProto.DataType.FLOAT

/** What recognition reads from a graph. */
export interface GraphInfo {
  inputName: string
  /** Each input dimension: its size, or its symbolic name. */
  inputShape: Array<number | string>
  /** ONNX element type of the input (1: float32). */
  inputType: number
  outputNames: string[]
  /** Weights in the initializers, in millions. */
  paramsM: number
}

/** Reads a graph's first real input (initializers listed as inputs by old exporters are skipped). */
export function graphInfo(bytes: Uint8Array): GraphInfo {
  const graph = decodeModel(bytes).graph
  const initializers = new Set((graph?.initializer ?? []).map((t) => t.name))
  const input = (graph?.input ?? []).find((i) => !initializers.has(i.name))
  const tensor = input?.type?.tensorType
  const inputShape = (tensor?.shape?.dim ?? []).map((d) =>
    d.dimValue != null && !d.dimParam ? Number(d.dimValue) : d.dimParam || '?',
  )
  let params = 0
  for (const t of graph?.initializer ?? []) params += (t.dims ?? []).reduce<number>((a, d) => a * Number(d), 1)
  return {
    inputName: input?.name ?? '',
    inputShape,
    inputType: tensor?.elemType ?? 0,
    outputNames: (graph?.output ?? []).map((o) => o.name ?? ''),
    paramsM: params / 1e6,
  }
}

export const describeGraph = (g: GraphInfo): string =>
  `input ${g.inputName} [${g.inputShape.join(', ')}]${g.inputType === FLOAT ? '' : ` of element type ${g.inputType}`}, ` +
  `outputs ${g.outputNames.join(', ')}, ${g.paramsM.toFixed(1)} M weights`

/** Why the graph cannot run with this profile's processing (shape and type only), or undefined. */
export function structuralMismatch(profile: ModelProfile, g: GraphInfo): string | undefined {
  const [, channels, h, w] = g.inputShape
  if (g.inputShape.length !== 4) return `its input has ${g.inputShape.length} dimensions, not [N, 3, H, W]`
  if (g.inputType !== FLOAT) return `its input is of element type ${g.inputType}, not float32`
  if (typeof channels === 'number' && channels !== 3) return `its input has ${channels} channels, not 3`
  const { size } = profile
  if (size.kind === 'short-side') {
    if (typeof h === 'number' || typeof w === 'number')
      return `its input is fixed at ${h}×${w}, but ${profile.name} sizes each photo (short side ${size.side}, multiples of ${size.multiple})`
  } else if (size.multiple) {
    // An export of the same weights at another size (e.g. ISNet at 704² for `fast`) runs at its own.
    if ((typeof h === 'number' && h % size.multiple) || (typeof w === 'number' && w % size.multiple))
      return `its input is ${h}×${w}, but ${profile.name} takes sides that are multiples of ${size.multiple}`
  } else if ((typeof h === 'number' && h !== size.height) || (typeof w === 'number' && w !== size.width)) {
    return `its input is ${h}×${w}, but ${profile.name} takes ${size.height}×${size.width}`
  }
  const { outputs, outputIndex } = profile.signature
  if (outputs !== undefined && g.outputNames.length !== outputs)
    return `it has ${g.outputNames.length} outputs, but ${profile.name} has ${outputs}`
  if (g.outputNames.length <= outputIndex) return `it has no output ${outputIndex}`
  return undefined
}

/** Whether the graph carries the profile's published names (when the profile knows them). */
function namesMatch(profile: ModelProfile, g: GraphInfo): boolean {
  const { inputName, outputName } = profile.signature
  return (!inputName || inputName === g.inputName) && (!outputName || g.outputNames.includes(outputName))
}

/**
 * Whether a static graph is at the profile's own size. Exports at another multiple run when the
 * profile is named, but are not recognised: 320² and 2048² are multiples of 64 too (U²-Net,
 * BiRefNet HR), so ISNet would claim them.
 */
function atNativeSize(profile: ModelProfile, g: GraphInfo): boolean {
  const [, , h, w] = g.inputShape
  if (profile.size.kind !== 'fixed') return true
  return (typeof h !== 'number' || h === profile.size.height) && (typeof w !== 'number' || w === profile.size.width)
}

const inRange = (p: ModelProfile, g: GraphInfo) =>
  !p.signature.paramsM || (g.paramsM >= p.signature.paramsM[0] && g.paramsM <= p.signature.paramsM[1])

/**
 * The profiles whose published graph this one looks like: shape, type, outputs and names; the
 * weight count then narrows graphs with the same I/O (U²-Net from U²-Netp, BiRefNet from its lite
 * variant), when it leaves any.
 */
export function candidates(g: GraphInfo, profiles: readonly ModelProfile[] = PROFILES): ModelProfile[] {
  const byIo = profiles.filter((p) => !structuralMismatch(p, g) && atNativeSize(p, g) && namesMatch(p, g))
  const byWeights = byIo.filter((p) => inRange(p, g))
  return byWeights.length ? byWeights : byIo
}

/** The output the profile reads: by its published name when the graph has it, else by index. */
export function outputNameFor(profile: ModelProfile, g: GraphInfo): string {
  const { outputName, outputIndex } = profile.signature
  return outputName && g.outputNames.includes(outputName) ? outputName : g.outputNames[outputIndex]
}

/**
 * The profile of a model file: `named` (SEGMENTATION_PROFILE) when given, checked against the
 * graph; otherwise the one profile the graph matches.
 * @throws {Error} for an unknown name, a graph the named profile cannot run, a graph no profile
 * matches or one several match; each message lists the profiles
 */
export function recognize(g: GraphInfo, path: string, named?: string): ModelProfile {
  if (named) {
    const profile = profileByName(named)
    const why = structuralMismatch(profile, g)
    if (why) {
      const fits = candidates(g).map((p) => p.name)
      throw new Error(
        `Segmentation model ${path} does not fit profile ${named}: ${why} (${describeGraph(g)}). ` +
          `${fits.length ? `It looks like ${fits.join(' or ')}. ` : ''}The profiles are ${profileNames()}.`,
      )
    }
    return profile
  }
  const found = candidates(g)
  if (found.length === 1) return found[0]
  if (!found.length) {
    throw new Error(
      `Segmentation model ${path} matches no profile (${describeGraph(g)}). ` +
        `The profiles are ${profileNames()}; if it is one of them, set SEGMENTATION_PROFILE (docs/models.md).`,
    )
  }
  throw new Error(
    `Segmentation model ${path} looks like ${found.map((p) => p.name).join(', ')} (${describeGraph(g)}): ` +
      `set SEGMENTATION_PROFILE to the one it is. The profiles are ${profileNames()}.`,
  )
}
