import { OpenAPIHono } from '@hono/zod-openapi'
import type { AppEnv } from '../env'
import { validationHook } from '../errors'

/** A router whose validation failures become 400 problems (one hook for every route). */
export const createRouter = () => new OpenAPIHono<AppEnv>({ defaultHook: validationHook })

/** A row of Hono's route table (`app.routes`): middleware rows have the method `ALL`. */
type RouteRow = { method: string; path: string }

/** `/v1/jobs/:id/result` → a pattern matching `/v1/jobs/<any one segment>/result`, whole. */
const pathPattern = (path: string) =>
  new RegExp(
    `^${path
      .split('/')
      .map((segment) => (segment.startsWith(':') ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('/')}$`,
  )

/**
 * The methods a path answers, read from the app's own route table (so from the registered routes,
 * never a hand list): call it once every router is mounted. A path no route knows gets []. GET
 * brings HEAD, which Hono answers with the GET route.
 *
 * @example
 * const allowed = allowedMethods(app.routes)
 * allowed('/v1/jobs/0b7f…') // ['GET', 'HEAD', 'DELETE']
 */
export function allowedMethods(routes: readonly RouteRow[]): (path: string) => string[] {
  const byPath = new Map<string, { pattern: RegExp; methods: Set<string> }>()
  for (const { method, path } of routes) {
    if (method === 'ALL') continue
    const entry = byPath.get(path) ?? { pattern: pathPattern(path), methods: new Set<string>() }
    byPath.set(path, entry)
    entry.methods.add(method)
    if (method === 'GET') entry.methods.add('HEAD')
  }
  const entries = [...byPath.values()]
  return (path) => [...new Set(entries.filter((e) => e.pattern.test(path)).flatMap((e) => [...e.methods]))]
}

/** `Prefer: wait=N` → seconds to wait, capped at 8; null when absent. */
export function preferWaitSeconds(prefer: string | undefined): number | null {
  const match = prefer?.match(/(?:^|[,;\s])wait=(\d+)/i)
  if (!match) return null
  return Math.min(Number(match[1]), 8)
}
