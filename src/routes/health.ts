/**
 * @module
 * GET /health/live and /health/ready (SPEC.md §1): unauthenticated.
 */
import { createRoute, z } from '@hono/zod-openapi'
import { createRouter } from '../lib/router'
import { json, noCredentials } from '../schemas/common'

const HealthSchema = z
  .object({
    status: z.enum(['ok', 'ready', 'unavailable']),
    checks: z.record(z.string(), z.string()).optional(),
  })
  .openapi('Health', { example: { status: 'ready', checks: { d1: 'ok', inference: 'ready' } } })

export const live = createRoute({
  method: 'get',
  path: '/health/live',
  operationId: 'getLiveness',
  summary: 'Check that the API process is alive',
  tags: ['Service'],
  security: noCredentials,
  responses: { 200: json(HealthSchema, 'The API process is alive', { status: 'ok' }) },
})

export const ready = createRoute({
  method: 'get',
  path: '/health/ready',
  operationId: 'getReadiness',
  summary: 'Check that storage and an inference server are ready',
  tags: ['Service'],
  security: noCredentials,
  responses: {
    200: json(HealthSchema, 'D1 and an inference server are ready', {
      status: 'ready',
      checks: { d1: 'ok', inference: 'ready' },
    }),
    503: json(HealthSchema, 'A required dependency is not ready', {
      status: 'unavailable',
      checks: { d1: 'ok', inference: 'unavailable' },
    }),
  },
})

export const health = createRouter()
  .openapi(live, (c) => c.json({ status: 'ok' as const }, 200))
  .openapi(ready, async (c) => {
    const [db, inference] = await Promise.all([
      c.env.DB.prepare('SELECT 1 AS ok')
        .first()
        .then(
          () => 'ok',
          () => 'unreachable',
        ),
      c
        .get('services')
        .inference.ready()
        .then((r) => r.state),
    ])
    const checks = { d1: db, inference }
    const ok = db === 'ok' && inference !== 'unavailable'
    return ok
      ? c.json({ status: 'ready' as const, checks }, 200)
      : c.json({ status: 'unavailable' as const, checks }, 503)
  })
