import { randomUUID } from 'node:crypto'
import { SignJWT } from 'jose'
import { describe, expect, it } from 'vitest'
import { AUDIENCE, bodyHash, createVerifier, ISSUER, signRequest } from '../src/auth.js'

const KEY = 'test-signing-key'
const body = new TextEncoder().encode('image bytes')
const path = '/v1/remove?quality=balanced&alpha=raw&feather=0&output=mask'
const now = () => Math.floor(Date.now() / 1000)

/** A token with any claims, for the cases signRequest refuses to make. */
async function token(claims: Record<string, unknown>, key = KEY): Promise<string> {
  const t = now()
  const jwt = await new SignJWT({
    mth: 'POST',
    pth: path,
    bsh: bodyHash(body),
    iss: ISSUER,
    aud: AUDIENCE,
    iat: t,
    exp: t + 30,
    jti: randomUUID(),
    ...claims,
  })
    .setProtectedHeader({ alg: 'HS256' })
    .sign(new TextEncoder().encode(key))
  return `Bearer ${jwt}`
}

async function verify(authorization: string | undefined, { method = 'POST', p = path, b = body } = {}) {
  const verifier = createVerifier(KEY)
  const claims = await verifier.verifyHeader(authorization, method, p)
  verifier.verifyBody(claims, b)
  return claims
}

const rejects = (promise: Promise<unknown>, reason: RegExp) =>
  expect(promise).rejects.toMatchObject({
    code: 'invalid_signature',
    status: 401,
    message: expect.stringMatching(reason),
  })

describe('request signing', () => {
  it('accepts a request signed by signRequest', async () => {
    const claims = await verify(await signRequest(KEY, { method: 'POST', path, body }))
    expect(claims.bsh).toBe(bodyHash(body))
  })

  it('hashes an empty body as the hash of ""', () => {
    expect(bodyHash()).toBe('47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU')
  })

  it('rejects a missing header or a bad signature', async () => {
    await rejects(verify(undefined), /missing bearer token/)
    await rejects(
      verify(await signRequest('another-key', { method: 'POST', path, body })),
      /ERR_JWS_SIGNATURE_VERIFICATION_FAILED/,
    )
  })

  it('rejects wrong issuer or audience', async () => {
    await rejects(verify(await token({ iss: 'someone' })), /ERR_JWT_CLAIM_VALIDATION_FAILED/)
    await rejects(verify(await token({ aud: 'elsewhere' })), /ERR_JWT_CLAIM_VALIDATION_FAILED/)
  })

  it('rejects an expired token (beyond the 30 s tolerance)', async () => {
    await rejects(verify(await token({ iat: now() - 100, exp: now() - 40 })), /ERR_JWT_EXPIRED/)
  })

  it('rejects a token issued more than 30 s in the future', async () => {
    await rejects(verify(await token({ iat: now() + 45, exp: now() + 60 })), /issued in the future/)
  })

  it('rejects a lifetime over 60 s', async () => {
    await rejects(verify(await token({ exp: now() + 61 })), /lifetime over 60 s/)
  })

  it('rejects a token without a required claim', async () => {
    await rejects(verify(await token({ bsh: undefined })), /ERR_JWT_CLAIM_VALIDATION_FAILED/)
  })

  it('rejects a method or path mismatch, including the query string', async () => {
    const auth = () => signRequest(KEY, { method: 'POST', path, body })
    await rejects(verify(await auth(), { method: 'PUT' }), /method mismatch/)
    await rejects(verify(await auth(), { p: '/v1/inspect' }), /path mismatch/)
    await rejects(verify(await auth(), { p: path.replace('output=mask', 'output=cutout') }), /path mismatch/)
    await rejects(verify(await auth(), { p: '/v1/remove' }), /path mismatch/)
  })

  it('rejects a body whose hash differs', async () => {
    await rejects(
      verify(await signRequest(KEY, { method: 'POST', path, body }), { b: new Uint8Array([1, 2, 3]) }),
      /body hash mismatch/,
    )
  })

  it('rejects a replayed jti', async () => {
    const verifier = createVerifier(KEY)
    const auth = await signRequest(KEY, { method: 'POST', path, body })
    await verifier.verifyHeader(auth, 'POST', path)
    await rejects(verifier.verifyHeader(auth, 'POST', path), /already used/)
    // A fresh token with a new jti is fine.
    await verifier.verifyHeader(await signRequest(KEY, { method: 'POST', path, body }), 'POST', path)
  })

  it('forgets a jti only after its token can no longer verify', async () => {
    let clock = now()
    const verifier = createVerifier(KEY, { clock: () => clock })
    const jti = randomUUID()
    await verifier.verifyHeader(
      await signRequest(KEY, { method: 'POST', path, body }, { now: clock, lifetime: 10, jti }),
      'POST',
      path,
    )
    clock += 35 // expired 25 s ago: still inside the tolerance, so still remembered
    await rejects(
      verifier.verifyHeader(
        await signRequest(KEY, { method: 'POST', path, body }, { now: clock - 35, lifetime: 10, jti }),
        'POST',
        path,
      ),
      /already used/,
    )
  })
})
