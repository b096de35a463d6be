/**
 * The OpenAPI document is validated in Node: the validator compiles JSON schemas with
 * `new Function`, which workerd forbids. The app itself is plain Hono and runs here too.
 */
import { Validator } from '@seriousme/openapi-schema-validator'
import { describe, expect, it } from 'vitest'
import { createApp } from '../../src/app'

const ROUTES = [
  'get /health/live',
  'get /health/ready',
  'post /v1/uploads',
  'put /v1/uploads/{id}/content',
  'post /v1/uploads/{id}/complete',
  'post /v1/removals',
  'get /v1/jobs',
  'get /v1/jobs/{id}',
  'delete /v1/jobs/{id}',
  'get /v1/jobs/{id}/events',
  'get /v1/jobs/{id}/result',
  'get /v1/usage',
  'post /v1/batches',
  'get /v1/batches/{id}',
  'post /v1/webhooks',
  'get /v1/webhooks',
  'delete /v1/webhooks/{id}',
  'get /v1/webhooks/{id}/deliveries',
  'post /v1/webhooks/{endpointId}/deliveries/{deliveryId}/replay',
  'get /v1/api-keys',
  'post /v1/api-keys',
  'delete /v1/api-keys/{id}',
  'post /v1/auth/email/start',
  'post /v1/auth/email/verify',
  'post /v1/auth/refresh',
  'post /v1/auth/logout',
  'post /v1/device-authorizations',
  'post /v1/device-authorizations/{userCode}/approve',
  'post /v1/device-authorizations/token',
  'delete /v1/device',
]
/** Routes that are not workspace-scoped JSON resources keep their own error sets. */
const PUBLIC = ['/v1/auth/', '/v1/device']

/**
 * The document route needs no storage, but every request passes the rate limiter; outside workerd
 * its Durable Object is replaced by one that always allows (the limiter is tested in workerd).
 */
const CONTRACT_ENV = {
  DOCS_URL: 'https://docs.example',
  ANONYMOUS_CLIENT: {
    idFromName: (name: string) => name,
    get: () => ({ hit: async () => ({ allowed: true, limit: 30, remaining: 29, reset: 60 }) }),
  },
}

describe('GET /openapi.json', () => {
  it('is a valid OpenAPI 3.1 document, version 2.0.0, listing every route with its errors', async () => {
    const res = await createApp().request('/openapi.json', {}, CONTRACT_ENV)
    expect(res.status).toBe(200)
    const doc = (await res.json()) as {
      openapi: string
      info: { version: string }
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>
      components: { schemas: Record<string, unknown> }
    }
    const result = await new Validator().validate(doc as never)
    expect(result.errors ?? []).toEqual([])
    expect(result.valid).toBe(true)
    expect(doc.openapi).toBe('3.1.0')
    expect(doc.info.version).toBe('2.0.0')
    const listed = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m} ${path}`))
    expect(listed.sort()).toEqual([...ROUTES].sort())
    for (const route of ROUTES.filter((r) => r.includes('/v1/') && !PUBLIC.some((p) => r.includes(p)))) {
      const [method, path] = route.split(' ')
      expect(Object.keys(doc.paths[path][method].responses)).toEqual(
        expect.arrayContaining(['400', '401', '403', '404', '500', '503']),
      )
    }
    const removal = doc.paths['/v1/removals'].post.responses
    expect(Object.keys(removal)).toEqual(expect.arrayContaining(['200', '202', '402', '409', '413', '415', '422']))
    expect(Object.keys(doc.components.schemas)).toEqual(
      expect.arrayContaining(['Job', 'Problem', 'RemovalOptions', 'Upload', 'Usage']),
    )
  })
})
