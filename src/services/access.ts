/**
 * @module
 * Who may call each route (DESIGN.md §3 "Scopes per route"), in one table that the routes read
 * through `authorize('METHOD /path')` and that the tests walk.
 */
import type { Scope } from './auth'

export interface RouteAccess {
  /** Scopes a credential must carry. */
  scopes: readonly Scope[]
  /** Callers without a credential act as their anonymous device (SPEC.md §5.4). */
  anonymous?: boolean
}

export const ROUTE_ACCESS = {
  'POST /v1/uploads': { scopes: ['images:write'] },
  'PUT /v1/uploads/{id}/content': { scopes: ['images:write'] },
  'POST /v1/uploads/{id}/complete': { scopes: ['images:write'] },
  'POST /v1/removals': { scopes: ['images:write'], anonymous: true },
  'POST /v1/virtual-try-ons': { scopes: ['tryon:write', 'jobs:read'] },
  'GET /v1/jobs': { scopes: ['jobs:read'] },
  'GET /v1/jobs/{id}': { scopes: ['jobs:read'], anonymous: true },
  'DELETE /v1/jobs/{id}': { scopes: ['images:write'], anonymous: true },
  'GET /v1/jobs/{id}/events': { scopes: ['jobs:read'], anonymous: true },
  'GET /v1/jobs/{id}/result': { scopes: ['jobs:read'], anonymous: true },
  'POST /v1/batches': { scopes: ['images:write'] },
  'GET /v1/batches/{id}': { scopes: ['jobs:read'] },
  'GET /v1/usage': { scopes: ['jobs:read'], anonymous: true },
  'POST /v1/webhooks': { scopes: ['webhooks:write'] },
  'GET /v1/webhooks': { scopes: ['webhooks:write'] },
  'DELETE /v1/webhooks/{id}': { scopes: ['webhooks:write'] },
  'GET /v1/webhooks/{id}/deliveries': { scopes: ['webhooks:write'] },
  'POST /v1/webhooks/{endpointId}/deliveries/{deliveryId}/replay': { scopes: ['webhooks:write'] },
  'POST /v1/projects': { scopes: ['images:write'] },
  'GET /v1/projects': { scopes: ['jobs:read'] },
  'GET /v1/projects/{id}': { scopes: ['jobs:read'] },
  'DELETE /v1/projects/{id}': { scopes: ['images:write'] },
  'GET /v1/projects/{id}/events': { scopes: ['jobs:read'] },
  'GET /v1/projects/{id}/revisions': { scopes: ['jobs:read'] },
  'POST /v1/projects/{id}/revisions': { scopes: ['images:write'] },
  'GET /v1/projects/{id}/revisions/{revisionId}': { scopes: ['jobs:read'] },
  'GET /v1/projects/{id}/revisions/{revisionId}/mask': { scopes: ['jobs:read'] },
  'POST /v1/projects/{id}/refinements': { scopes: ['images:write'] },
  'GET /v1/projects/{id}/refinements/{refinementId}': { scopes: ['jobs:read'] },
  'POST /v1/projects/{id}/exports': { scopes: ['images:write'] },
  'GET /v1/projects/{id}/exports/{exportId}': { scopes: ['jobs:read'] },
  'GET /v1/projects/{id}/exports/{exportId}/result': { scopes: ['jobs:read'] },
  'POST /v1/catalog-images': { scopes: ['images:write'] },
  'GET /v1/catalog-images': { scopes: ['jobs:read'] },
  'GET /v1/catalog-images/{id}': { scopes: ['jobs:read'] },
  'GET /v1/api-keys': { scopes: ['keys:write'] },
  'POST /v1/api-keys': { scopes: ['keys:write'] },
  'DELETE /v1/api-keys/{id}': { scopes: ['keys:write'] },
} as const satisfies Record<string, RouteAccess>

export type RouteKey = keyof typeof ROUTE_ACCESS

/**
 * Routes that take no API credential: the service documents, sign-in, the device flow's public
 * steps and forgetting the device. Refresh and logout present a refresh token instead; device
 * approval, reading a pending code and the workspace list need a signed-in session (checked by `requireSession`).
 */
export const PUBLIC_ROUTES = [
  'GET /health/live',
  'GET /health/ready',
  'GET /openapi.json',
  'POST /v1/auth/email/start',
  'POST /v1/auth/email/verify',
  'POST /v1/device-authorizations',
  'POST /v1/device-authorizations/token',
  'DELETE /v1/device',
] as const

/** Routes with their own credential rules (see the comment on PUBLIC_ROUTES). */
export const SPECIAL_ROUTES = [
  'POST /v1/auth/refresh',
  'POST /v1/auth/logout',
  'GET /v1/device-authorizations/{userCode}',
  'POST /v1/device-authorizations/{userCode}/approve',
  'GET /v1/workspaces',
] as const
