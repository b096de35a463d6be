/**
 * `npm start`'s first step for the edge, run by scripts/start.ts as a process of its own: applies
 * the D1 migrations to the local database under LOCAL_STATE_DIR (default .wrangler/state) and seeds
 * the Development workspace, its credits and an API key, kept in `<state>/dev-api-key.json`. One
 * D1 session does both (scripts/lib/local-d1.ts).
 *
 * The key is minted on the first run; later runs re-assert the same rows (INSERT OR IGNORE) and
 * reuse it. When the key file was deleted, a new key is made for the existing Development
 * workspace, if there is one.
 */
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { type LocalD1, openLocalD1 } from './lib/local-d1'
import {
  DEV_WORKSPACE_NAME,
  type DevKeyState,
  mintKeyState,
  readKeyState,
  seedStatements,
  writeKeyState,
} from './lib/local-state'

const ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '..')
const stateDir = resolve(ROOT, process.env.LOCAL_STATE_DIR || '.wrangler/state')
const keyStatePath = join(stateDir, 'dev-api-key.json')
const log = (message: string) => process.stdout.write(`[start] ${message}\n`)

/** Applies D1's migrations; whether the database was empty before (its first migration applied now). */
async function applyMigrations(db: LocalD1): Promise<{ fresh: boolean }> {
  log('applying D1 migrations (local)…')
  const applied = await db.migrate()
  log(applied.length ? `D1 migrations: applied (${applied.length})` : 'D1 migrations: up to date')
  return { fresh: applied.includes('0000_init.sql') }
}

/** `fresh`: the database was empty before this start, so it holds no workspace to look for. */
async function seed(db: LocalD1, { fresh }: { fresh: boolean }): Promise<DevKeyState> {
  let state = readKeyState(keyStatePath)
  if (!state && fresh) {
    state = mintKeyState()
    writeKeyState(keyStatePath, state)
    log('seeding the Development workspace')
  } else if (!state) {
    const [existing] = await db.all<{ id: string }>({
      sql: 'SELECT id FROM workspaces WHERE name = ? ORDER BY created_at LIMIT 1',
      params: [DEV_WORKSPACE_NAME],
    })
    state = mintKeyState(existing?.id)
    writeKeyState(keyStatePath, state)
    log(existing ? `new development key for workspace ${existing.id}` : 'seeding the Development workspace')
  }
  await db.batch(seedStatements(state))
  return state
}

const db = await openLocalD1(ROOT, stateDir)
try {
  await seed(db, await applyMigrations(db))
} finally {
  await db.close()
}
