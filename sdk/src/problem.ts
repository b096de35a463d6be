/**
 * @module
 * Typed API errors: every non-2xx answer becomes a `CutoutProblem` carrying the problem+json
 * fields (SPEC.md §7), so callers branch on `code` and `field` instead of parsing messages.
 */

/** The problem+json body of an error response. */
export interface ProblemBody {
  type?: string
  status?: number
  code?: string
  title?: string
  detail?: string
  field?: string
  retryable?: boolean
  requestId?: string
}

export class CutoutProblem extends Error {
  override readonly name = 'CutoutProblem'
  readonly status: number
  /** The stable error code, e.g. `invalid_input`, `quota_exhausted`, `rate_limit_exceeded`. */
  readonly code: string
  /** The request field at fault, when the API names one. */
  readonly field?: string
  readonly requestId?: string
  readonly retryable: boolean
  readonly title: string
  readonly detail: string
  readonly type?: string
  /** Seconds from `Retry-After`, when the answer carried one. */
  readonly retryAfter?: number

  constructor(status: number, body: ProblemBody, retryAfter?: number) {
    const code = body.code ?? `http_${status}`
    super(`${code}${body.field ? ` (${body.field})` : ''}: ${body.detail ?? body.title ?? `HTTP ${status}`}`)
    this.status = status
    this.code = code
    this.field = body.field
    this.requestId = body.requestId
    this.retryable = body.retryable ?? (status === 429 || status >= 500)
    this.title = body.title ?? `HTTP ${status}`
    this.detail = body.detail ?? this.title
    this.type = body.type
    this.retryAfter = retryAfter
  }

  /** Reads an error response (problem+json or anything else) into a problem. */
  static async fromResponse(res: Response): Promise<CutoutProblem> {
    const text = await res.text().catch(() => '')
    return CutoutProblem.fromBody(res, parseBody(text))
  }

  /** A problem from an already-parsed body (openapi-fetch parses error bodies itself). */
  static fromBody(res: Response, body: unknown): CutoutProblem {
    const parsed: ProblemBody = typeof body === 'object' && body !== null ? (body as ProblemBody) : {}
    if (!parsed.detail && typeof body === 'string' && body) parsed.detail = body.slice(0, 300)
    parsed.requestId ??= res.headers.get('x-request-id') ?? undefined
    return new CutoutProblem(res.status, parsed, retryAfterSeconds(res.headers))
  }
}

/** Work that ran and ended (a job, a refinement): its status, and its error when it failed. */
export interface EndedWork {
  status: string
  error?: { code: string; message: string } | null
}

/**
 * The problem for work that ended without succeeding: its own error's code and message, else
 * `canceled` (409) or `processing_failed` (500); never worth retrying as it is. `subject` names
 * it in the detail ("job 5b0e…", "the refinement").
 */
export function endedProblem(ended: EndedWork, subject: string): { status: number; body: ProblemBody } {
  const canceled = ended.status === 'canceled'
  return {
    status: canceled ? 409 : 500,
    body: {
      code: ended.error?.code ?? (canceled ? 'canceled' : 'processing_failed'),
      detail: ended.error?.message || `${subject} ended ${ended.status}`,
      retryable: false,
    },
  }
}

function parseBody(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

/** `Retry-After` as seconds: delta-seconds or an HTTP date (RFC 9110 §10.2.3). */
export function retryAfterSeconds(headers: Headers, now = Date.now()): number | undefined {
  const raw = headers.get('retry-after')
  if (!raw) return undefined
  if (/^\d+$/.test(raw.trim())) return Number(raw)
  const at = Date.parse(raw)
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000))
}
