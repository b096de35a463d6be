// verify-webhook.mjs: check a Cutout webhook delivery before trusting it (Node 18+).
import { Buffer } from 'node:buffer'
import { createHmac, timingSafeEqual } from 'node:crypto'

/** Deliveries older (or further in the future) than this are refused as replays. */
export const TOLERANCE_SECONDS = 5 * 60

/**
 * Returns the delivery id and the parsed event, or throws.
 * @param {string} rawBody the request body exactly as received (before any JSON parsing)
 * @param {Headers | Record<string, string | string[] | undefined>} headers a Headers object or Node's req.headers
 * @param {string} secret the endpoint's signing secret, whsec_ prefix included
 */
export function verifyWebhook(rawBody, headers, secret, now = Date.now()) {
  const header = (name) => (typeof headers.get === 'function' ? headers.get(name) : headers[name]) ?? ''
  const id = String(header('webhook-id'))
  const timestamp = String(header('webhook-timestamp'))
  const signature = String(header('webhook-signature'))
  if (!id || !/^\d+$/.test(timestamp) || !/^[0-9a-f]{64}$/.test(signature)) {
    throw new Error('missing or malformed webhook headers')
  }
  if (Math.abs(now / 1000 - Number(timestamp)) > TOLERANCE_SECONDS) throw new Error('stale webhook timestamp')
  const expected = createHmac('sha256', secret).update(`${timestamp}.${id}.${rawBody}`).digest()
  if (!timingSafeEqual(expected, Buffer.from(signature, 'hex'))) throw new Error('bad webhook signature')
  return { id, event: JSON.parse(rawBody) }
}
