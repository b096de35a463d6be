/**
 * @module
 * Exit codes that say what went wrong, so scripts can react without parsing messages:
 *
 * | code | meaning |
 * |---|---|
 * | 0 | everything worked (skipped, already-done files included) |
 * | 1 | usage: a bad argument or option, or a request the API refused as invalid |
 * | 2 | an input file is missing, unreadable, too large or not a supported image (also an image the |
 * |   | API could not decode or found too small), or two inputs would write the same output |
 * | 3 | authentication: not signed in, a bad or revoked key, a missing scope |
 * | 4 | quota or rate: no credits left, or rate limited after the retries |
 * | 5 | the server is unreachable or unavailable, or a wait timed out |
 * | 6 | a job ran and failed (or was canceled) |
 */
import { CutoutProblem, JobFailedError } from '@cutout/sdk'

export const EXIT = { ok: 0, usage: 1, input: 2, auth: 3, quota: 4, server: 5, jobFailed: 6 } as const
export type ExitCode = (typeof EXIT)[keyof typeof EXIT]

/** An error the CLI explains itself, with the exit code it ends with. */
export class CliError extends Error {
  constructor(
    readonly exitCode: ExitCode,
    message: string,
  ) {
    super(message)
  }
}

/**
 * An input file's bytes were refused on their way up: by the SDK before sending anything (smaller
 * than 32×32 by its header) or by the upload's PUT or complete (undecodable, empty), 400
 * `invalid_input`. That is the file's fault, exit 2, as 413 and 415 are; a 400 anywhere else (an
 * option, a scope) stays a usage error.
 */
export class InputRefused extends CliError {
  constructor(
    readonly file: string,
    readonly problem: CutoutProblem,
  ) {
    super(EXIT.input, describe(problem))
  }
}

/** An upload's failure as the CLI reports it: a refused image becomes `InputRefused`. */
export function uploadFailure(file: string, err: unknown): unknown {
  const refused = err instanceof CutoutProblem && err.status === 400 && err.code === 'invalid_input'
  return refused ? new InputRefused(file, err) : err
}

/** The exit code for any error a command throws. */
export function exitCodeFor(err: unknown): ExitCode {
  if (err instanceof CliError) return err.exitCode
  if (err instanceof JobFailedError) return EXIT.jobFailed
  if (!(err instanceof CutoutProblem)) return EXIT.server // network failures, aborted waits
  if (err.status === 401 || err.status === 403) return EXIT.auth
  if (err.status === 402 || err.status === 429) return EXIT.quota
  if (err.status === 413 || err.status === 415) return EXIT.input
  if (err.status >= 500 || err.status === 408) return EXIT.server
  return EXIT.usage
}

/** One line for a person: the API's detail and request id (for support), or the error's message. */
export function describe(err: unknown): string {
  if (err instanceof CutoutProblem) {
    const again = err.retryAfter ? ` (try again in ${duration(err.retryAfter)})` : ''
    return `${err.code}${err.field ? ` (${err.field})` : ''}: ${err.detail}${again}${err.requestId ? ` [request ${err.requestId}]` : ''}`
  }
  if (err instanceof Error) {
    const cause = err.cause instanceof Error ? `: ${err.cause.message}` : ''
    return `${err.message}${cause}`
  }
  return String(err)
}

/** Seconds for a person: `45 s`, `12 min`, `3 h`. */
function duration(seconds: number): string {
  if (seconds < 120) return `${seconds} s`
  if (seconds < 7200) return `${Math.ceil(seconds / 60)} min`
  return `${Math.ceil(seconds / 3600)} h`
}
