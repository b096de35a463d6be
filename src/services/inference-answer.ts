/**
 * @module
 * Reading a job route's answer from the inference server (src/contract/frames.ts): stages as
 * they come, each output handed to the caller to store, and how the call ended. Apart from the
 * client (inference.ts), which makes the call.
 */
import { type Notice, type OutputFrame, readFrames } from '../contract/frames'
import type { InferenceStage } from '../contract/stages'
import { InferenceFailure } from './inference-failure'

/** An output of a call as stored: where, what, and the length and hash a later call is signed over. */
export interface StoredOutput {
  name: string
  key: string
  contentType: string
  width?: number
  height?: number
  size: number
  sha256: string
}

/** What a finished call left: its outputs, and what its `done` frame said. */
export interface CallOutcome {
  outputs: StoredOutput[]
  modelVersion: string
  warnings: Notice[]
  /** A removal's mask confidence, 0..1 (DoneFrame.confidence); absent on other kinds. */
  confidence?: number
}

export interface AnswerHandlers {
  /** Called as the server passes each stage. */
  onStage?(stage: InferenceStage): Promise<void>
  /** Stores one output's bytes, or drops them (null); the stream must be read to its end either way. */
  store(output: Omit<OutputFrame, 'type'>, body: ReadableStream<Uint8Array>): Promise<StoredOutput | null>
  /** Errors of the handlers' own that must pass through as they are (e.g. a job canceled meanwhile). */
  passThrough?(err: unknown): boolean
}

/**
 * Reads a job route's answer as it comes: stages as the server passes them, each output handed to
 * `store`, and `done` ends the call. An `error` frame, or an answer that ends without `done`, is an
 * inference failure like an error status; a connection lost mid-answer is a lost server.
 */
export async function receiveAnswer(answer: Response, handlers: AnswerHandlers): Promise<CallOutcome> {
  if (!answer.body) throw new InferenceFailure('processor_unavailable', 'The answer had no body', 502, true)
  const outputs: StoredOutput[] = []
  try {
    for await (const frame of readFrames(answer.body)) {
      switch (frame.type) {
        case 'stage':
          await handlers.onStage?.(frame.stage)
          break
        case 'output': {
          const { body, type: _type, ...output } = frame
          const stored = await handlers.store(output, body)
          if (stored) outputs.push(stored)
          break
        }
        case 'done':
          return {
            outputs,
            modelVersion: frame.modelVersion,
            warnings: frame.warnings,
            ...(typeof frame.confidence === 'number' ? { confidence: frame.confidence } : {}),
          }
        case 'error':
          throw InferenceFailure.fromFrame(frame)
      }
    }
  } catch (err) {
    if (err instanceof InferenceFailure || handlers.passThrough?.(err)) throw err
    // A connection lost while reading the answer (or an output that could not be stored from it)
    // is a lost server, like one that never answered: the call may be retried.
    throw new InferenceFailure('processor_unavailable', `The answer was cut off: ${String(err)}`, 502, true)
  }
  throw new InferenceFailure(
    'processor_unavailable',
    'The inference server closed the answer before it was done',
    502,
    true,
  )
}
