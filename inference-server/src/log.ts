/**
 * @module
 * One JSON object per line on stdout (errors on stderr), so a log shipper can parse every line.
 * Fields are chosen by the caller; nothing here adds a path's query, a header or a token, and
 * callers must not either (docs/operations.md "Logs").
 */

export type LogLevel = 'info' | 'warn' | 'error'

/** Writes one log line: `{ time, level, msg, ...fields }`. */
export function log(level: LogLevel, msg: string, fields: Record<string, unknown> = {}): void {
  const line = JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields })
  if (level === 'error') console.error(line)
  else console.log(line)
}

/** An error's fields for a log line: its name, message and stack (no cause: it may hold a body). */
export function errorFields(err: unknown): Record<string, unknown> {
  if (!(err instanceof Error)) return { error: String(err) }
  return { error: err.message, errorName: err.name, stack: err.stack }
}
