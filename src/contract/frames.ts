/**
 * @module
 * The answer of a job route of the inference server is a stream of frames, so the edge learns
 * each stage when the work passes it, and can receive several outputs in one answer. A frame is
 * one line of JSON (its header) and, for an `output`, exactly `length` raw bytes after it:
 *
 * ```
 * {"type":"stage","stage":"segmenting"}\n
 * {"type":"stage","stage":"rendering"}\n
 * {"type":"output","name":"result","contentType":"image/png","length":1234,"width":512,"height":512}\n<1234 bytes>
 * {"type":"done","modelVersion":"isnet-general@1.4.5+fp16","warnings":[],"timings":{"decode":3.1}}\n
 * ```
 * A failure after the answer began is an `error` frame (the body of an error answer) and ends it.
 * An answer that ends without `done` or `error` is a lost connection.
 */
import type { InferenceErrorBody } from './errors.js'
import type { InferenceStage } from './stages.js'

export const FRAMES_CONTENT_TYPE = 'application/vnd.cutout.frames'

/** A notice on a result (SPEC.md §2 Job.warnings). */
export interface Notice {
  code: string
  message: string
}

export type StageFrame = { type: 'stage'; stage: InferenceStage }
export type OutputFrame = {
  type: 'output'
  /** The kind's name for it (`result`, `mask`, …): the edge decides where it is stored. */
  name: string
  contentType: string
  length: number
  width?: number
  height?: number
}
/** The warning a removal carries when its mask's confidence is below the server's threshold (issue 31). */
export const LOW_CONFIDENCE_CODE = 'low_confidence'

export type DoneFrame = {
  type: 'done'
  modelVersion: string
  warnings: Notice[]
  /**
   * A removal's: how sure its mask is, 0..1 (inference-server/src/levels/confidence.ts); below the
   * server's threshold the warnings hold LOW_CONFIDENCE_CODE. Absent on other jobs.
   */
  confidence?: number
  /** Milliseconds per step, for `Server-Timing`-like diagnostics. */
  timings?: Record<string, number>
}
export type ErrorFrame = { type: 'error' } & InferenceErrorBody
export type Frame = StageFrame | OutputFrame | DoneFrame | ErrorFrame

const encoder = new TextEncoder()
const NEWLINE = 0x0a
/** A header line longer than this is a broken stream, not a frame. */
const MAX_HEADER_BYTES = 64 * 1024

/** The bytes of one frame: its header line, then the output's bytes. */
export function encodeFrame(frame: Frame, bytes?: Uint8Array): Uint8Array {
  if (frame.type === 'output' && bytes?.byteLength !== frame.length) {
    throw new Error(`Expected ${frame.length} output bytes but received ${bytes?.byteLength ?? 0}`)
  }
  const header = encoder.encode(`${JSON.stringify(frame)}\n`)
  if (!bytes) return header
  const out = new Uint8Array(header.byteLength + bytes.byteLength)
  out.set(header)
  out.set(bytes, header.byteLength)
  return out
}

/** A frame as read: an `output` carries its bytes as a stream that must be read before the next frame. */
export type ReadFrame = Exclude<Frame, OutputFrame> | (OutputFrame & { body: ReadableStream<Uint8Array> })

/** The most read at once: a header's read, and each read of an output's bytes. */
const HEADER_READ_BYTES = 64 * 1024
const OUTPUT_READ_BYTES = 1024 * 1024

/** Reads of a body: up to `max` bytes, waiting for `min` of them when it can; undefined at its end. */
interface ByteSource {
  read(max: number, min: number): Promise<Uint8Array | undefined>
  release(): void
}

/**
 * A body's bytes in reads as large as asked where the stream allows it: a byte stream (workerd's
 * and undici's bodies) is read into our own buffers, `min` at a time with workerd's `readAtLeast`,
 * so a 200 MB output is 200 reads rather than the 50,000 chunks of 4 KiB it arrives in (each a
 * trip through the stream machinery of the Worker's isolate). Other streams, chunk by chunk.
 */
function byteSource(body: ReadableStream<Uint8Array>): ByteSource {
  let byob: (Omit<ReadableStreamBYOBReader, 'readAtLeast'> & { readAtLeast?: ReadAtLeast }) | undefined
  try {
    byob = body.getReader({ mode: 'byob' }) as typeof byob
  } catch {
    byob = undefined // not a byte stream
  }
  if (!byob) {
    const reader = body.getReader()
    return {
      read: async () => {
        const { done, value } = await reader.read()
        return done ? undefined : value
      },
      release: () => reader.releaseLock(),
    }
  }
  const bytes = byob
  return {
    async read(max, min) {
      const view = new Uint8Array(max)
      const { value } = bytes.readAtLeast && min > 1 ? await bytes.readAtLeast(min, view) : await bytes.read(view)
      return value?.byteLength ? value : undefined
    },
    release: () => bytes.releaseLock(),
  }
}

type ReadAtLeast = (min: number, view: Uint8Array) => Promise<{ done: boolean; value?: Uint8Array }>

/**
 * Reads frames from an answer's body, holding at most one read beyond what is asked, so an output
 * streams through (into R2) without being buffered whole.
 */
export async function* readFrames(body: ReadableStream<Uint8Array>): AsyncGenerator<ReadFrame> {
  const source = byteSource(body)
  let buffer: Uint8Array = new Uint8Array(0)
  let ended = false

  /** Appends one read to what is held; false at the body's end. */
  const fill = async (max = HEADER_READ_BYTES, min = 1): Promise<boolean> => {
    if (ended) return false
    const value = await source.read(max, min)
    if (!value) {
      ended = true
      return false
    }
    if (!buffer.byteLength) {
      buffer = value
      return true
    }
    const next = new Uint8Array(buffer.byteLength + value.byteLength)
    next.set(buffer)
    next.set(value, buffer.byteLength)
    buffer = next
    return true
  }

  try {
    for (;;) {
      let newline = buffer.indexOf(NEWLINE)
      while (newline < 0) {
        if (buffer.byteLength > MAX_HEADER_BYTES) throw new Error('Frame header too long')
        if (!(await fill())) {
          if (buffer.byteLength) throw new Error('The answer ended inside a frame header')
          return
        }
        newline = buffer.indexOf(NEWLINE)
      }
      const frame = JSON.parse(new TextDecoder().decode(buffer.subarray(0, newline))) as Frame
      buffer = buffer.subarray(newline + 1)
      if (frame.type !== 'output') {
        yield frame
        continue
      }
      let remaining = frame.length
      let drained = false
      const bytes = new ReadableStream<Uint8Array>({
        async pull(controller) {
          if (remaining === 0) {
            drained = true
            controller.close()
            return
          }
          // The output's own bytes are read only once those held are passed on, and never
          // beyond its end: the server sends them all, so waiting for them is safe.
          const want = Math.min(remaining, OUTPUT_READ_BYTES)
          if (!buffer.byteLength && !(await fill(want, want))) {
            controller.error(new Error(`The answer ended ${remaining} bytes short of output ${frame.name}`))
            return
          }
          const take = Math.min(remaining, buffer.byteLength)
          const chunk = take === buffer.byteLength ? buffer : buffer.slice(0, take)
          // What is passed on may be taken over by its reader: nothing of it is kept here.
          buffer = take === buffer.byteLength ? new Uint8Array(0) : buffer.subarray(take)
          controller.enqueue(chunk)
          remaining -= take
          if (remaining === 0) {
            drained = true
            controller.close()
          }
        },
      })
      yield { ...frame, body: bytes }
      if (!drained) throw new Error(`Output ${frame.name} was not read before the next frame`)
    }
  } finally {
    source.release()
  }
}
