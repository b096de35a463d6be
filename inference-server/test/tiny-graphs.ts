/**
 * Tiny ONNX graphs with a real model's I/O signature (names, shapes, element type, dynamic axes)
 * and an output that is a known function of the input, so a test can check the server's pre- and
 * post-processing against a reference computed independently, without the model's weights.
 *
 * The graph: Y = mean over channels of |X|, × `gain` + `bias`, at the mask output (index
 * `outputIndex`), and −mean at every other output, so reading the wrong output shows. The absolute
 * value keeps the normalisation visible through a min-max stretch (an affine output would not).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import onnxProto from 'onnx-proto'

const { onnx } = onnxProto

export interface TinySignature {
  inputName: string
  /** [N, C, H, W]: numbers are fixed, strings symbolic. */
  inputShape: Array<number | string>
  outputNames: string[]
  outputIndex: number
  /** Y = mean × gain + bias: (1, 0) for logits or min-max profiles; an output used as is must stay in 0..1. */
  gain: number
  bias: number
}

/** The signature of rembg's isnet-general-use export (the profile of the same name). */
export const ISNET_GENERAL_USE: TinySignature = {
  inputName: 'input_image',
  inputShape: [1, 3, 1024, 1024],
  outputNames: ['output'],
  outputIndex: 0,
  gain: 1,
  bias: 0,
}

const dims = (shape: Array<number | string>) =>
  shape.map((d) => (typeof d === 'number' ? { dimValue: d } : { dimParam: d }))

const floatScalar = (name: string, value: number) =>
  onnx.TensorProto.create({ name, dims: [], dataType: onnx.TensorProto.DataType.FLOAT, floatData: [value] })

/** The encoded model (opset 13). */
export function tinyGraph(s: TinySignature): Uint8Array {
  const [n, , h, w] = s.inputShape
  const outShape = [n, 1, h, w]
  const valueInfo = (name: string, shape: Array<number | string>) =>
    onnx.ValueInfoProto.create({
      name,
      type: { tensorType: { elemType: onnx.TensorProto.DataType.FLOAT, shape: { dim: dims(shape) } } },
    })
  const nodes = [
    onnx.NodeProto.create({ opType: 'Abs', input: [s.inputName], output: ['abs'], name: 'abs' }),
    onnx.NodeProto.create({
      opType: 'ReduceMean',
      input: ['abs'],
      output: ['mean'],
      name: 'mean',
      attribute: [
        { name: 'axes', type: onnx.AttributeProto.AttributeType.INTS, ints: [1] },
        { name: 'keepdims', type: onnx.AttributeProto.AttributeType.INT, i: 1 },
      ],
    }),
    onnx.NodeProto.create({ opType: 'Mul', input: ['mean', 'gain'], output: ['scaled'], name: 'scale' }),
    onnx.NodeProto.create({
      opType: 'Add',
      input: ['scaled', 'bias'],
      output: [s.outputNames[s.outputIndex]],
      name: 'shift',
    }),
    ...s.outputNames
      .filter((_, i) => i !== s.outputIndex)
      .map((name) => onnx.NodeProto.create({ opType: 'Neg', input: ['mean'], output: [name], name: `side_${name}` })),
  ]
  const model = onnx.ModelProto.create({
    irVersion: 7,
    opsetImport: [{ domain: '', version: 13 }],
    producerName: 'cutout-tests',
    graph: {
      name: 'tiny',
      node: nodes,
      initializer: [floatScalar('gain', s.gain), floatScalar('bias', s.bias)],
      input: [valueInfo(s.inputName, s.inputShape)],
      output: s.outputNames.map((name) => valueInfo(name, outShape)),
    },
  })
  return onnx.ModelProto.encode(model).finish()
}

const dirs: string[] = []

/** Writes the graph to a fresh temporary directory (removed by removeTinyGraphs) and returns its path. */
export async function writeTinyGraph(s: TinySignature, name = 'model.onnx'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'cutout-tiny-'))
  dirs.push(dir)
  const path = join(dir, name)
  await writeFile(path, tinyGraph(s))
  return path
}

/** Removes every graph written so far. */
export async function removeTinyGraphs(): Promise<void> {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })))
}
