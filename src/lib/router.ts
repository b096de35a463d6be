import { OpenAPIHono } from '@hono/zod-openapi'
import type { AppEnv } from '../env'
import { validationHook } from '../errors'

/** A router whose validation failures become 400 problems (one hook for every route). */
export const createRouter = () => new OpenAPIHono<AppEnv>({ defaultHook: validationHook })

/** `Prefer: wait=N` → seconds to wait, capped at 8; null when absent. */
export function preferWaitSeconds(prefer: string | undefined): number | null {
  const match = prefer?.match(/(?:^|[,;\s])wait=(\d+)/i)
  if (!match) return null
  return Math.min(Number(match[1]), 8)
}
