/**
 * `npm start`'s local D1 session (scripts/lib/local-d1.ts) keeps wrangler's bookkeeping: a fresh
 * state gets every migration once, in file order, recorded in wrangler's own table, so that
 * `wrangler d1 migrations apply --local` on the same state finds nothing left to apply; a second
 * session applies nothing and sees the first one's rows.
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, expect, it } from 'vitest'
import { openLocalD1 } from '../../scripts/lib/local-d1'
import { DEV_WORKSPACE_NAME, mintKeyState, seedStatements } from '../../scripts/lib/local-state'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const stateDir = mkdtempSync(join(tmpdir(), 'cutout-local-d1-'))
const MIGRATIONS = readdirSync(join(ROOT, 'migrations'))
  .filter((name) => name.endsWith('.sql'))
  .sort()

afterAll(() => rmSync(stateDir, { recursive: true, force: true }))

it('applies each migration once, in order, and wrangler finds none left to apply', async () => {
  const key = mintKeyState()
  const first = await openLocalD1(ROOT, stateDir)
  try {
    expect(await first.migrate()).toEqual(MIGRATIONS)
    expect(await first.migrate()).toEqual([])
    await first.batch(seedStatements(key))
    await first.batch(seedStatements(key)) // the seed is idempotent
    const recorded = await first.all<{ name: string }>({ sql: 'SELECT name FROM d1_migrations ORDER BY id' })
    expect(recorded.map((r) => r.name)).toEqual(MIGRATIONS)
  } finally {
    await first.close()
  }

  const second = await openLocalD1(ROOT, stateDir)
  try {
    expect(await second.migrate()).toEqual([])
    const workspaces = await second.all<{ id: string }>({
      sql: 'SELECT id FROM workspaces WHERE name = ?',
      params: [DEV_WORKSPACE_NAME],
    })
    expect(workspaces).toEqual([{ id: key.workspaceId }])
  } finally {
    await second.close()
  }

  const wrangler = execFileSync(
    join(ROOT, 'node_modules', '.bin', 'wrangler'),
    ['d1', 'migrations', 'apply', 'DB', '--local', '--persist-to', stateDir],
    { cwd: ROOT, encoding: 'utf8', env: { ...process.env, CI: 'true', WRANGLER_SEND_METRICS: 'false' } },
  )
  expect(wrangler).toMatch(/No migrations to apply/)
}, 120_000)
