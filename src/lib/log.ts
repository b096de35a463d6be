/**
 * @module
 * The edge's logs: one JSON object per line (`{ time, level, msg, ...fields }`), written through
 * `logSink` so a test can read what a request or a job logged. What a line may carry
 * (docs/operations.md "Logs"): request, job and trace ids, a HASHED workspace id (`workspaceTag`),
 * a route pattern or a path without its query; never a secret, an API key, a signed URL or a query
 * string: callers pass fields, never a URL or headers.
 */
import { sha256Hex } from './crypto'
import { redactUrls } from './failure'

export type LogLevel = 'info' | 'warn' | 'error'

/**
 * Where lines go: the console (Workers Logs / `wrangler tail` collect it); where datapoints go: the
 * bound Analytics Engine dataset. Tests replace these to read what was written (miniflare's local
 * dataset keeps nothing).
 */
export const logSink = {
  write(level: LogLevel, line: string): void {
    if (level === 'error') console.error(line)
    else if (level === 'warn') console.warn(line)
    else console.log(line)
  },
  datapoint(dataset: AnalyticsEngineDataset, point: AnalyticsEngineDataPoint): void {
    dataset.writeDataPoint(point)
  },
}

/**
 * Writes one log line. Any URL in it loses its query, fragment and credentials on the way out
 * (lib/failure.ts `redactUrls`): a field such as an error's text may quote one that a caller
 * did not mean to log.
 */
export function log(level: LogLevel, msg: string, fields: Record<string, unknown> = {}): void {
  logSink.write(level, redactUrls(JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields })))
}

const tags = new Map<string, string>()

/**
 * A workspace id as logs show it: the first 16 hex digits of its SHA-256, so one workspace's lines
 * can be followed without the id itself (an API-key-bearing tenant's identifier) in the logs.
 */
export async function workspaceTag(workspaceId: string): Promise<string> {
  let tag = tags.get(workspaceId)
  if (!tag) {
    tag = `ws_${(await sha256Hex(`workspace:${workspaceId}`)).slice(0, 16)}`
    if (tags.size > 1000) tags.clear()
    tags.set(workspaceId, tag)
  }
  return tag
}
