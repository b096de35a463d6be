/** `@cutout/sdk/node`'s session file: a session is handed out only for the API it belongs to. */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileSession, normalizeBaseUrl, writeSessionFile } from '@cutout/sdk/node'
import { afterAll, expect, it } from 'vitest'

const dir = mkdtempSync(join(tmpdir(), 'cutout-session-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

it('fileSession loads the stored session only for its own API (in any spelling)', async () => {
  const path = join(dir, 'session.json')
  const tokens = { accessToken: 'at', refreshToken: 'rt', expiresAt: Date.now() + 60_000 }
  await writeSessionFile(path, { ...tokens, baseUrl: 'https://api.example' })
  expect(await fileSession(path, 'HTTPS://API.example:443/').load()).toMatchObject(tokens)
  expect(await fileSession(path, 'https://evil.example').load()).toBeUndefined()
  expect(await fileSession(path, 'http://api.example').load()).toBeUndefined()
  expect(normalizeBaseUrl('http://127.0.0.1:8787/')).toBe('http://127.0.0.1:8787')
})
