import { mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { loadModel, resolveProviders } from '../src/segmentation/model.js'

const SUPPORTED = [
  { name: 'cpu', bundled: true },
  { name: 'webgpu', bundled: true },
  { name: 'cuda', bundled: false },
  { name: 'tensorrt', bundled: false },
]

describe('INFERENCE_PROVIDERS', () => {
  it('defaults to cpu and parses a comma-separated list in order', () => {
    expect(resolveProviders()).toEqual(['cpu'])
    expect(resolveProviders(' CPU ')).toEqual(['cpu'])
  })

  it('accepts cuda when its libraries are installed next to the binding', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ort-bin-'))
    for (const f of ['libonnxruntime_providers_shared.so', 'libonnxruntime_providers_cuda.so'])
      await writeFile(join(dir, f), '')
    expect(resolveProviders('cuda,cpu', { binaryDir: dir, supported: SUPPORTED })).toEqual(['cuda', 'cpu'])
  })

  it('refuses cuda with a clear message when the provider was not installed', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ort-bin-'))
    expect(() => resolveProviders('cuda,cpu', { binaryDir: dir, supported: SUPPORTED })).toThrow(
      /^Execution provider cuda is not installed: libonnxruntime_providers_shared\.so, libonnxruntime_providers_cuda\.so missing from .*docs\/gpu\.md.*INFERENCE_PROVIDERS=cpu/,
    )
  })

  it('refuses unknown and empty provider names', () => {
    expect(() => resolveProviders('cdua', { supported: SUPPORTED })).toThrow(
      'Unknown execution provider cdua in INFERENCE_PROVIDERS: this onnxruntime-node 1.30.0 build supports cpu, webgpu, cuda, tensorrt',
    )
    expect(() => resolveProviders(' , ')).toThrow(/Expected at least one execution provider/)
  })

  it('loadModel checks the providers before touching the model', async () => {
    await expect(loadModel({ providers: ['cdua'], modelPath: '/nonexistent.onnx' })).rejects.toThrow(
      /Unknown execution provider cdua/,
    )
  })
})
