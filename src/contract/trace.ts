/**
 * @module
 * W3C Trace Context (`traceparent`, https://www.w3.org/TR/trace-context/): the edge accepts one or
 * makes one per request, keeps its trace id on the job, and sends a child span to the inference
 * server, which logs the same trace id. Both packages parse and write the header here.
 */

export const TRACEPARENT_HEADER = 'traceparent'

export interface TraceContext {
  /** 32 lowercase hex digits, never all zeros. */
  traceId: string
  /** 16 lowercase hex digits, never all zeros: the span that sent the header. */
  spanId: string
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/
const ALL_ZEROS = /^0+$/

/** A header's trace context, or undefined for a missing or malformed one (the caller makes a new one). */
export function parseTraceparent(header: string | null | undefined): TraceContext | undefined {
  const match = TRACEPARENT.exec(header?.trim().toLowerCase() ?? '')
  if (!match) return undefined
  const [, version, traceId, spanId] = match
  // Version ff is forbidden by the spec; zero ids mean "no trace".
  if (version === 'ff' || ALL_ZEROS.test(traceId) || ALL_ZEROS.test(spanId)) return undefined
  return { traceId, spanId }
}

/** `count` random bytes as lowercase hex (Web Crypto: the Worker and Node both have it). */
function randomHex(count: number): string {
  const bytes = crypto.getRandomValues(new Uint8Array(count))
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')
}

/** A new span id (16 hex digits). */
export const newSpanId = (): string => randomHex(8)

/** A new trace id (32 hex digits). */
export const newTraceId = (): string => randomHex(16)

/** The `traceparent` of a new span in `traceId` (sampled flag set: we log every request). */
export const childTraceparent = (traceId: string): string => `00-${traceId}-${newSpanId()}-01`
