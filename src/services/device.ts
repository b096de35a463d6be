/**
 * @module
 * The anonymous device cookie (DESIGN.md §3): `__Host-device`, a jose-signed token holding a random
 * device id. A missing, expired or tampered cookie simply means a new device; the per-IP allowance
 * still holds, so a new device gets no fresh allowance from the same address.
 */
import { jwtVerify, SignJWT } from 'jose'

export const DEVICE_COOKIE = '__Host-device'
const DEVICE_TTL_SECONDS = 365 * 24 * 3600
const ISSUER = 'cutout-device'

export interface Device {
  id: string
  /** True when this request minted the device: the response must set the cookie. */
  fresh: boolean
}

const keyOf = (secret: string) => new TextEncoder().encode(secret)

export async function readDevice(cookie: string | undefined, secret: string): Promise<Device> {
  if (cookie) {
    try {
      const { payload } = await jwtVerify(cookie, keyOf(secret), { issuer: ISSUER, algorithms: ['HS256'] })
      if (typeof payload.sub === 'string' && payload.sub) return { id: payload.sub, fresh: false }
    } catch {
      // forged, expired or from another deployment: treat as a new device
    }
  }
  return { id: crypto.randomUUID(), fresh: true }
}

export async function deviceCookie(deviceId: string, secret: string): Promise<string> {
  const token = await new SignJWT({})
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuer(ISSUER)
    .setSubject(deviceId)
    .setIssuedAt()
    .setExpirationTime(`${DEVICE_TTL_SECONDS}s`)
    .sign(keyOf(secret))
  return `${DEVICE_COOKIE}=${token}; Max-Age=${DEVICE_TTL_SECONDS}; Path=/; Secure; HttpOnly; SameSite=Lax`
}

export const clearedDeviceCookie = () => `${DEVICE_COOKIE}=; Max-Age=0; Path=/; Secure; HttpOnly; SameSite=Lax`

const DEVICE_WORKSPACE_PREFIX = 'device:'

/** Anonymous jobs are owned by a pseudo-workspace per device. */
export const deviceWorkspaceId = (deviceId: string) => `${DEVICE_WORKSPACE_PREFIX}${deviceId}`

/** Whether `workspaceId` is a device's pseudo-workspace: the caller sent no credential. */
export const isDeviceWorkspace = (workspaceId: string) => workspaceId.startsWith(DEVICE_WORKSPACE_PREFIX)
