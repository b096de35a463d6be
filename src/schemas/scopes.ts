/**
 * @module
 * Who may call each operation, said in /openapi.json (issue 46 item 1): `x-cutout-scopes` lists
 * the scopes its row of the access table asks for (services/access.ts, the rows the routes
 * authorize with), so a client or a reader learns from the document which key an operation takes,
 * and the 403 it lists (schemas/problems.ts) has the same source. An extension, not role names in
 * the `Bearer` requirement: OpenAPI 3.1 allows those, but linters (Spectral's
 * oas3-operation-security-defined) take them for undeclared OAuth scopes.
 */
import type { RouteConfig } from '@hono/zod-openapi'
import { ROUTE_ACCESS, type RouteAccess } from '../services/access'

/** The access row of `route`, if the table has one (public and session routes have none). */
export function accessOf(route: Pick<RouteConfig, 'method' | 'path'>): RouteAccess | undefined {
  return (ROUTE_ACCESS as Record<string, RouteAccess>)[`${route.method.toUpperCase()} ${route.path}`]
}

export const SCOPES_EXTENSION = 'x-cutout-scopes'

/** `route` with the scopes of its access row, when it has one. */
export function withScopes<R extends RouteConfig>(route: R): R {
  const scopes = accessOf(route)?.scopes
  return scopes ? { ...route, [SCOPES_EXTENSION]: [...scopes] } : route
}
