/**
 * @module
 * `cutout login` (device flow through the SDK's `deviceLogin`) and `cutout logout`. The session is
 * saved under the user's config directory with 0600 permissions; every later command refreshes it
 * when the access token has expired.
 */
import { hostname } from 'node:os'
import { Cutout, deviceLogin } from '@cutout/sdk'
import { readSessionFile, removeSessionFile, writeSessionFile } from '@cutout/sdk/node'
import {
  anonymousClient,
  type GlobalOptions,
  notSignedIn,
  Output,
  resolveBaseUrl,
  sessionPath,
  storedSessionFor,
} from '../context.js'

export async function login(options: GlobalOptions): Promise<void> {
  const out = new Output(!!options.json)
  const cutout = await anonymousClient(options)
  const session = await deviceLogin(cutout, {
    client: `cutout-cli on ${hostname()}`,
    onCode: (a) => {
      out.info(`Open ${a.verificationUri} and enter the code ${a.userCode}`)
      out.info(`(or open ${a.verificationUriComplete})`)
      out.info(`Waiting for approval (the code expires in ${Math.round(a.expiresIn / 60)} minutes)…`)
    },
  })
  const path = sessionPath()
  // The file holds one session: the one it replaces is ended at its own API, not left valid there.
  const replaced = await readSessionFile(path)
  if (replaced) {
    await new Cutout({ baseUrl: replaced.baseUrl })
      .signOut(replaced.refreshToken)
      .then(() => out.info(`Signed out of ${replaced.baseUrl} (one session is kept at a time)`))
      .catch((err) => out.info(`could not revoke the session at ${replaced.baseUrl}: ${err}`))
  }
  await writeSessionFile(path, { ...session, baseUrl: cutout.baseUrl })
  out.result({ signedIn: true, baseUrl: cutout.baseUrl, sessionFile: path }, `Signed in to ${cutout.baseUrl}`)
}

/**
 * Revokes the session at its API (best effort) and deletes the file. A session for another API than
 * the one named (--base-url, CUTOUT_BASE_URL) is left alone: this API has no session to end.
 */
export async function logout(options: GlobalOptions): Promise<void> {
  const out = new Output(!!options.json)
  const baseUrl = await resolveBaseUrl(options)
  const { session, otherApi } = await storedSessionFor(baseUrl)
  if (session) {
    const cutout = await anonymousClient(options)
    await cutout.signOut(session.refreshToken).catch((err) => out.info(`could not revoke the session: ${err}`))
    await removeSessionFile(sessionPath())
  }
  out.result(
    { signedOut: true, wasSignedIn: !!session, baseUrl, ...(otherApi ? { sessionFor: otherApi } : {}) },
    session ? `Signed out of ${baseUrl}` : notSignedIn(baseUrl, otherApi),
  )
}
