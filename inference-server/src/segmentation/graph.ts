/**
 * @module
 * Makes a static-size ONNX graph size-agnostic (issue 14). ISNet was exported with a fixed
 * [1, 3, 1024, 1024] input, and each of its Resize nodes ("upsample like" in the PyTorch source)
 * got the target size of that export baked in as a constant. Here the input's height and width
 * become symbolic, and each Resize's constant `sizes` becomes the equivalent constant `scales`
 * (target ÷ the size its input had at the export's resolution), so the same weights run at any
 * side that every pooling level divides evenly (multiples of 64 for ISNet, measured). At the
 * export's own size the scales give the same output sizes and the same half-pixel sampling
 * positions, so the output is identical (checked at prepare time and in a test).
 *
 * The protobuf is read and written with `onnx-proto` (the onnx.proto schema compiled for
 * protobufjs); docs/decisions.md "The size-agnostic graph" says why.
 */
import onnxProto from 'onnx-proto'

const { onnx } = onnxProto
type Model = InstanceType<typeof onnx.ModelProto>
type Graph = InstanceType<typeof onnx.GraphProto>
type Node = InstanceType<typeof onnx.NodeProto>
type Tensor = InstanceType<typeof onnx.TensorProto>

/** Symbolic names given to the input's and outputs' spatial dimensions. */
export const HEIGHT_DIM = 'height'
export const WIDTH_DIM = 'width'

/** A Resize whose target size is a constant: what the rewrite needs to know about it. */
export interface FixedResize {
  node: Node
  /** The tensor being resized (its shape at the export's size is measured by a probe run). */
  data: string
  /** The constant target height and width. */
  target: [number, number]
}

export const decodeModel = (bytes: Uint8Array): Model => onnx.ModelProto.decode(bytes)
export const encodeModel = (model: Model): Uint8Array => onnx.ModelProto.encode(model).finish()

/** The static [N, C, H, W] of the graph's first input, or undefined when any dimension is symbolic. */
export function staticInputShape(model: Model): number[] | undefined {
  const dims = model.graph?.input?.[0]?.type?.tensorType?.shape?.dim ?? []
  if (!dims.length || dims.some((d) => d.dimParam || d.dimValue == null)) return undefined
  return dims.map((d) => Number(d.dimValue))
}

/** The int64 values of a constant tensor (raw little-endian bytes or the typed field). */
function int64Values(t: Tensor): number[] {
  if (t.rawData?.length) {
    const view = new DataView(t.rawData.buffer, t.rawData.byteOffset, t.rawData.byteLength)
    return Array.from({ length: t.rawData.byteLength / 8 }, (_, i) => Number(view.getBigInt64(i * 8, true)))
  }
  return (t.int64Data ?? []).map(Number)
}

/** Every constant in the graph by output name: initializers and Constant nodes' `value`. */
function constants(graph: Graph): Map<string, Tensor> {
  const out = new Map<string, Tensor>()
  for (const t of graph.initializer ?? []) out.set(t.name ?? '', t as Tensor)
  for (const n of graph.node ?? []) {
    const value = n.opType === 'Constant' ? n.attribute?.find((a) => a.name === 'value')?.t : undefined
    if (value) out.set(n.output?.[0] ?? '', value as Tensor)
  }
  return out
}

/**
 * The target height and width of a Resize's `sizes` input when they are constant: either the
 * whole `sizes` is a constant, or (PyTorch's export of `size=tar.shape[2:]`) a Concat of the
 * input's own N, C (from Shape/Slice) and a constant [H, W].
 */
function constantTarget(sizes: string, graph: Graph, consts: Map<string, Tensor>): [number, number] | undefined {
  const whole = consts.get(sizes)
  if (whole) return int64Values(whole).slice(-2) as [number, number]
  const concat = graph.node?.find((n) => n.opType === 'Concat' && n.output?.[0] === sizes)
  const last = concat?.input?.[concat.input.length - 1]
  const tail = last === undefined ? undefined : consts.get(last)
  const values = tail ? int64Values(tail) : []
  return values.length === 2 ? (values as [number, number]) : undefined
}

/** The Resize nodes whose target size is a fixed constant. */
export function fixedResizes(model: Model): FixedResize[] {
  const graph = model.graph as Graph
  const consts = constants(graph)
  const out: FixedResize[] = []
  for (const node of graph.node ?? []) {
    const sizes = node.opType === 'Resize' ? node.input?.[3] : undefined
    if (!sizes) continue
    const target = constantTarget(sizes, graph, consts)
    if (target) out.push({ node: node as Node, data: node.input?.[0] ?? '', target })
  }
  return out
}

/**
 * A copy of `model` that also outputs the shape of every fixed Resize's input, so one run at the
 * export's size tells each Resize's scale. Shapes are tiny int64 outputs, unlike the tensors.
 */
export function probeModel(model: Model, resizes: FixedResize[]): { bytes: Uint8Array; outputs: string[] } {
  const probe = decodeModel(encodeModel(model))
  const graph = probe.graph as Graph
  const outputs = resizes.map((_, i) => `__resize_probe_${i}`)
  resizes.forEach((r, i) => {
    graph.node.push(onnx.NodeProto.create({ opType: 'Shape', input: [r.data], output: [outputs[i]], name: outputs[i] }))
    graph.output.push(
      onnx.ValueInfoProto.create({
        name: outputs[i],
        type: { tensorType: { elemType: onnx.TensorProto.DataType.INT64, shape: { dim: [{ dimValue: 4 }] } } },
      }),
    )
  })
  return { bytes: encodeModel(probe), outputs }
}

/** Drops nodes none of whose outputs is used (repeatedly), then unused initializers. */
function pruneDead(graph: Graph): void {
  const graphOutputs = new Set(graph.output.map((o) => o.name))
  for (let changed = true; changed; ) {
    const used = new Set<string>(graphOutputs as Set<string>)
    for (const n of graph.node) for (const i of n.input ?? []) used.add(i)
    const before = graph.node.length
    graph.node = graph.node.filter((n) => (n.output ?? []).some((o) => used.has(o)))
    changed = graph.node.length !== before
  }
  const used = new Set<string>()
  for (const n of graph.node) for (const i of n.input ?? []) used.add(i)
  graph.initializer = graph.initializer.filter((t) => used.has(t.name ?? ''))
}

/** Makes the last two dimensions of a value's shape symbolic. */
function symbolicSpatial(value: {
  type?: { tensorType?: { shape?: { dim?: unknown[] | null } | null } | null } | null
}) {
  const dims = value.type?.tensorType?.shape?.dim as unknown[] | undefined
  if (dims?.length !== 4) return
  dims[2] = onnx.TensorShapeProto.Dimension.create({ dimParam: HEIGHT_DIM })
  dims[3] = onnx.TensorShapeProto.Dimension.create({ dimParam: WIDTH_DIM })
}

/**
 * The size-agnostic graph: `inputShapes[i]` is the [N, C, H, W] that resizes[i]'s input had at
 * the export's size (from the probe). Returns the encoded model.
 * @throws {Error} when a Resize's target is not a whole multiple of its input's size
 */
export function sizeAgnosticModel(model: Model, resizes: FixedResize[], inputShapes: number[][]): Uint8Array {
  const out = decodeModel(encodeModel(model))
  const graph = out.graph as Graph
  const byName = new Map(graph.node.map((n) => [n.name, n]))
  resizes.forEach((r, i) => {
    const [, , h, w] = inputShapes[i]
    const [th, tw] = r.target
    if (th % h || tw % w) {
      throw new Error(`Resize ${r.node.name} goes from ${h}×${w} to ${th}×${tw}: not a whole multiple`)
    }
    const scales = [1, 1, th / h, tw / w]
    const name = `${r.node.name}__scales`
    graph.initializer.push(
      onnx.TensorProto.create({
        name,
        dims: [4],
        dataType: onnx.TensorProto.DataType.FLOAT,
        floatData: scales,
      }),
    )
    const node = byName.get(r.node.name) as Node
    // Opset ≥ 13 Resize: X, roi, scales, sizes; exactly one of scales and sizes.
    node.input = [node.input[0], node.input[1] ?? '', name]
  })
  pruneDead(graph)
  // Intermediate shapes recorded at export time would now contradict the symbolic input.
  graph.valueInfo = []
  for (const v of [...graph.input, ...graph.output]) symbolicSpatial(v)
  return encodeModel(out)
}
