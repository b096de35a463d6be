/**
 * @module
 * The bearer credential (RFC 6750): how a request's `Authorization: Bearer <token>` is read, and the
 * challenge a 401 answers with, so both sides of it read the header the same way.
 */

/** The protection space every credential of this API belongs to: one, whatever the route. */
export const AUTH_REALM = 'cutout'

/** The token of `Authorization: Bearer <token>`, if any. */
export function bearerToken(header: string | undefined): string | undefined {
  return header?.match(/^Bearer\s+(.+)$/i)?.[1]?.trim() || undefined
}

/**
 * The `WWW-Authenticate` of a 401 (RFC 9110 §11.6.1 requires one): the Bearer scheme and realm, and
 * `error="invalid_token"` when the request sent a bearer token, which is then what was refused. A
 * request that sent none gets no error code (RFC 6750 §3), only the scheme to use.
 *
 * @example
 * authChallenge(undefined) // 'Bearer realm="cutout"'
 * authChallenge('Bearer sk_live_x') // 'Bearer realm="cutout", error="invalid_token"'
 */
export function authChallenge(authorization: string | undefined): string {
  const challenge = `Bearer realm="${AUTH_REALM}"`
  return bearerToken(authorization) ? `${challenge}, error="invalid_token"` : challenge
}
