/**
 * @module
 * Gives every request an id, echoed as `X-Request-Id` on every response, errors included.
 */
import { createMiddleware } from 'hono/factory'
import type { AppEnv } from '../env'

const VALID_INBOUND = /^[A-Za-z0-9._:-]{8,128}$/

export const requestId = () =>
  createMiddleware<AppEnv>(async function requestId(c, next) {
    const inbound = c.req.header('x-request-id')
    const id = inbound && VALID_INBOUND.test(inbound) ? inbound : `req_${crypto.randomUUID()}`
    c.set('requestId', id)
    await next()
    c.res.headers.set('X-Request-Id', id)
  })
