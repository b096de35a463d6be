import { randomUUID } from 'node:crypto'
import { SignJWT } from 'jose'
import { describe, expect, it } from 'vitest'
import {
  AUDIENCE,
  createVerifier,
  ISSUER,
  imagePart,
  optionsPart,
  partHash,
  type RequestPart,
  signedRequest,
} from '../src/auth.js'

const KEY = 'test-signing-key'
const path = '/v1/remove'
const image = new TextEncoder().encode('image bytes')
const parts: RequestPart[] = [optionsPart({ output: 'mask' }), imagePart(image)]
const manifest = parts.map((p) => ({ name: p.name, type: p.type, length: p.body.byteLength, sha256: partHash(p.body) }))
const body = new Uint8Array(Buffer.concat(parts.map((p) => p.body)))
const now = () => Math.floor(Date.now() / 1000)

/** A token with any claims, for the cases signedRequest refuses to make. */
async function token(claims: Record<string, unknown>, key = KEY): Promise<string> {
  const t = now()
  const jwt = await new SignJWT({
    mth: 'POST',
    pth: path,
    prt: manifest,
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

const sign = async (opts?: Parameters<typeof signedRequest>[4], key = KEY, p = path) =>
  (await signedRequest(key, 'POST', p, parts, opts)).headers.authorization

async function verify(authorization: string | undefined, { method = 'POST', p = path, b = body } = {}) {
  const verifier = createVerifier(KEY)
  const claims = await verifier.verifyHeader(authorization, method, p)
  return { claims, parts: verifier.verifyBody(claims, b) }
}

const rejects = (promise: Promise<unknown>, reason: RegExp) =>
  expect(promise).rejects.toMatchObject({
    code: 'invalid_signature',
    status: 401,
    message: expect.stringMatching(reason),
  })

describe('signedRequest', () => {
  it('sends the parts back to back, listed in order in the token', async () => {
    const signed = await signedRequest(KEY, 'post', path, parts)
    expect(signed.body).toEqual(body)
    expect(signed.headers['content-type']).toBe('application/octet-stream')
    const [, payload] = signed.headers.authorization.replace('Bearer ', '').split('.')
    expect(JSON.parse(Buffer.from(payload, 'base64url').toString())).toMatchObject({
      iss: ISSUER,
      aud: AUDIENCE,
      mth: 'POST',
      pth: path,
      prt: [
        { name: 'options', type: 'application/json', length: 17, sha256: partHash(parts[0].body) },
        { name: 'image', type: 'application/octet-stream', length: 11, sha256: partHash(image) },
      ],
    })
  })

  it('hashes an empty part as the hash of ""', () => {
    expect(partHash(new Uint8Array())).toBe('47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU')
  })
})

describe('request verification', () => {
  it('accepts a request signed by signedRequest and splits its body into the parts', async () => {
    const { claims, parts: split } = await verify(await sign())
    expect(claims.prt).toEqual(manifest)
    expect([...split.keys()]).toEqual(['options', 'image'])
    expect(new TextDecoder().decode(split.get('options'))).toBe('{"output":"mask"}')
    expect(split.get('image')).toEqual(image)
  })

  it('accepts empty parts and a request without parts', async () => {
    const verifier = createVerifier(KEY)
    const empty = await signedRequest(KEY, 'POST', path, [imagePart(new Uint8Array()), imagePart(image, 'second')])
    const claims = await verifier.verifyHeader(empty.headers.authorization, 'POST', path)
    const split = verifier.verifyBody(claims, empty.body)
    expect(split.get('image')).toEqual(new Uint8Array())
    expect(split.get('second')).toEqual(image)
    const none = await signedRequest(KEY, 'POST', path, [])
    expect(
      verifier.verifyBody(await verifier.verifyHeader(none.headers.authorization, 'POST', path), none.body).size,
    ).toBe(0)
  })

  it('rejects a missing header or a bad signature', async () => {
    await rejects(verify(undefined), /missing bearer token/)
    await rejects(verify(await sign(undefined, 'another-key')), /ERR_JWS_SIGNATURE_VERIFICATION_FAILED/)
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
    await rejects(verify(await token({ prt: undefined })), /ERR_JWT_CLAIM_VALIDATION_FAILED/)
    await rejects(verify(await token({ jti: undefined })), /ERR_JWT_CLAIM_VALIDATION_FAILED/)
  })

  it.each([
    ['not a list', { name: 'image' }],
    ['a part without a hash', [{ name: 'image', type: 'image/png', length: 11 }]],
    ['a negative length', [{ name: 'image', type: 'image/png', length: -1, sha256: partHash(image) }]],
    ['a fractional length', [{ name: 'image', type: 'image/png', length: 1.5, sha256: partHash(image) }]],
    ['a name twice', [manifest[1], manifest[1]]],
    ['a null part', [null]],
  ])('rejects a manifest with %s', async (_, prt) => {
    await rejects(verify(await token({ prt })), /prt must list parts as \{name, type, length, sha256\}/)
  })

  it('rejects a method or path mismatch, including a query string', async () => {
    await rejects(verify(await sign(), { method: 'PUT' }), /method mismatch/)
    await rejects(verify(await sign(), { p: '/v1/inspect' }), /path mismatch/)
    await rejects(verify(await sign(), { p: '/v1/remove?output=cutout' }), /path mismatch/)
    await rejects(verify(await sign(undefined, KEY, '/v1/remove?output=mask')), /path mismatch/)
  })

  it('rejects a part whose bytes differ from its hash, naming the part', async () => {
    const flipped = new Uint8Array(body)
    flipped[flipped.length - 1] ^= 1
    await rejects(verify(await sign(), { b: flipped }), /^Invalid request signature: hash mismatch in part image$/)
    const edited = new Uint8Array(body)
    edited[2] ^= 1
    await rejects(verify(await sign(), { b: edited }), /^Invalid request signature: hash mismatch in part options$/)
  })

  it('rejects parts moved across their boundary (same total length)', async () => {
    // Swapping the two parts keeps the length; the split then lands elsewhere.
    const swapped = new Uint8Array(Buffer.concat([image, parts[0].body]))
    await rejects(verify(await sign(), { b: swapped }), /hash mismatch in part options/)
  })

  it('rejects a body longer or shorter than the parts', async () => {
    const total = body.byteLength
    await rejects(
      verify(await sign(), { b: new Uint8Array([...body, 0]) }),
      new RegExp(`^Invalid request signature: body length ${total + 1} is not the parts' ${total}$`),
    )
    await rejects(verify(await sign(), { b: body.subarray(0, total - 1) }), /body length 27 is not the parts' 28/)
    await rejects(verify(await sign(), { b: new Uint8Array() }), /body length 0 is not the parts' 28/)
  })

  it('rejects a replayed jti', async () => {
    const verifier = createVerifier(KEY)
    const auth = await sign()
    await verifier.verifyHeader(auth, 'POST', path)
    await rejects(verifier.verifyHeader(auth, 'POST', path), /already used/)
    // A fresh token with a new jti is fine.
    await verifier.verifyHeader(await sign(), 'POST', path)
  })

  it('spends the jti even when the body then fails its check', async () => {
    const verifier = createVerifier(KEY)
    const auth = await sign()
    const claims = await verifier.verifyHeader(auth, 'POST', path)
    expect(() => verifier.verifyBody(claims, new Uint8Array())).toThrow(/body length/)
    await rejects(verifier.verifyHeader(auth, 'POST', path), /already used/)
  })

  it('forgets a jti only after its token can no longer verify', async () => {
    let clock = now()
    const verifier = createVerifier(KEY, { clock: () => clock })
    const jti = randomUUID()
    await verifier.verifyHeader(await sign({ now: clock, lifetime: 10, jti }), 'POST', path)
    clock += 35 // expired 25 s ago: still inside the tolerance, so still remembered
    await rejects(
      verifier.verifyHeader(await sign({ now: clock - 35, lifetime: 10, jti }), 'POST', path),
      /already used/,
    )
  })
})
