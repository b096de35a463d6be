/**
 * @module
 * W3C Trace Context and the request log: every request gets a trace id (the caller's
 * `traceparent`'s, or a new one), kept as `traceId` for the jobs it starts (their runner sends it
 * on to the inference server, src/services/inference.ts) and for the inference calls it makes while
 * its client waits (`callTrace`), and one JSON log line once it is answered. The line names the
 * matched route pattern and the path, never the query string (it may hold a signed URL's
 * signature), and the workspace only hashed (src/lib/log.ts).
 */
import type { Context } from 'hono'
import { createMiddleware } from 'hono/factory'
import { newTraceId, parseTraceparent, TRACEPARENT_HEADER } from '../contract/trace'
import type { AppEnv } from '../env'
import { log, workspaceTag } from '../lib/log'
import type { CallTrace, InferenceCall } from '../services/inference'

export const requestLog = () =>
  createMiddleware<AppEnv>(async function requestLog(c, next) {
    const started = Date.now()
    const traceId = parseTraceparent(c.req.header(TRACEPARENT_HEADER))?.traceId ?? newTraceId()
    c.set('traceId', traceId)
    await next()
    const status = c.res.status
    const pattern = c.req.routePath
    const workspaceId = c.get('auth')?.workspaceId
    log(status >= 500 && status !== 503 ? 'error' : 'info', 'request', {
      method: c.req.method,
      route: !pattern || pattern.endsWith('*') ? 'unmatched' : pattern,
      path: c.req.path,
      status,
      durationMs: Date.now() - started,
      requestId: c.get('requestId'),
      traceId,
      ...(workspaceId ? { workspace: await workspaceTag(workspaceId) } : {}),
    })
  })

/** The request's trace and id, for the inference calls it makes while its client waits. */
export const callTrace = (c: Context<AppEnv>): CallTrace => ({
  traceId: c.get('traceId'),
  requestId: c.get('requestId'),
})

/** An inference call the request's client waits on: the request's services' client, and its trace. */
export const inferenceCall = (c: Context<AppEnv>): InferenceCall => ({
  client: c.get('services').inference,
  trace: callTrace(c),
})
