/**
 * @module
 * The client's address, for the per-IP anonymous allowance and rate windows. Only the platform may
 * say it, never the client. On Cloudflare's network the edge sets `CF-Connecting-IP` and replaces
 * any value a client sent. Under `wrangler dev` (local mode, `ENVIRONMENT=development`) miniflare
 * keeps a value the client sent and fills the header only when it is absent, so there the header is
 * the client's word: local mode listens on 127.0.0.1, so every caller is this machine and shares one
 * address. (The Worker tests call the Worker directly and play the edge themselves.)
 */
import type { Env } from '../env'

/** The one address of every caller in local mode. */
export const LOCAL_CLIENT_ADDRESS = 'local'

/** Where Cloudflare's edge puts the connecting client's address. */
const EDGE_HEADER = 'cf-connecting-ip'

/**
 * @param env the Worker's environment (`ENVIRONMENT` says whether an edge stands in front)
 * @param headers the request's headers
 * @example clientAddress(c.env, c.req.raw.headers) // '203.0.113.7' on Cloudflare, 'local' under wrangler dev
 */
export function clientAddress(env: Pick<Env, 'ENVIRONMENT'>, headers: Headers): string {
  if (env.ENVIRONMENT === 'development') return LOCAL_CLIENT_ADDRESS
  return headers.get(EDGE_HEADER) ?? 'unknown'
}
