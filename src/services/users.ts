/**
 * @module
 * Users and their workspaces. The first sign-in of an email creates the user, a default
 * workspace with a free-tier credit account, and the owner membership.
 */
import { iso } from '../lib/time'
import { nextPeriodEnd } from '../lib/window'
import type { users, workspaces } from '../db/schema'
import type { D1Row } from '../db/rows'

/** Credits a new workspace gets per monthly period until a plan says otherwise. */
export const FREE_TIER_CREDITS = 50
export const DEFAULT_WORKSPACE_NAME = 'Personal'

export interface UserRef {
  id: string
  email: string
}

export interface WorkspaceRef {
  id: string
  name: string
}

/** A user's first membership, with the workspace's name (a join: the columns are renamed in the query). */
type MembershipRow = { user_id: D1Row<typeof users>['id']; email: D1Row<typeof users>['email'] } & {
  workspace_id: D1Row<typeof workspaces>['id']
  workspace_name: D1Row<typeof workspaces>['name']
}

async function firstMembership(db: D1Database, email: string): Promise<MembershipRow | null> {
  return db
    .prepare(
      `SELECT u.id AS user_id, u.email, w.id AS workspace_id, w.name AS workspace_name
         FROM users u
         JOIN workspace_members m ON m.user_id = u.id
         JOIN workspaces w ON w.id = m.workspace_id
        WHERE u.email = ?
        ORDER BY m.created_at, w.id
        LIMIT 1`,
    )
    .bind(email)
    .first<MembershipRow>()
}

/**
 * The user of a (normalised) email and the workspace a sign-in acts for (their oldest
 * membership), created on first sign-in. Every insert is guarded, so two concurrent first
 * sign-ins end with one user and one workspace.
 */
export async function findOrCreateUser(
  db: D1Database,
  email: string,
): Promise<{ user: UserRef; workspace: WorkspaceRef }> {
  let row = await firstMembership(db, email)
  if (!row) {
    const userId = crypto.randomUUID()
    const workspaceId = crypto.randomUUID()
    const now = iso()
    await db.batch([
      db
        .prepare('INSERT INTO users (id, email, created_at) VALUES (?, ?, ?) ON CONFLICT (email) DO NOTHING')
        .bind(userId, email, now),
      // The workspace is made only for a user without any membership (ours, or an older one left bare).
      db
        .prepare(
          `INSERT INTO workspaces (id, name, created_at)
           SELECT ?, ?, ? WHERE NOT EXISTS (
             SELECT 1 FROM workspace_members m JOIN users u ON u.id = m.user_id WHERE u.email = ?)`,
        )
        .bind(workspaceId, DEFAULT_WORKSPACE_NAME, now, email),
      db
        .prepare(
          `INSERT INTO credit_accounts (workspace_id, credit_limit, period_ends_at)
           SELECT ?, ?, ? WHERE EXISTS (SELECT 1 FROM workspaces WHERE id = ?)`,
        )
        .bind(workspaceId, FREE_TIER_CREDITS, nextPeriodEnd(), workspaceId),
      db
        .prepare(
          `INSERT INTO workspace_members (workspace_id, user_id, role, created_at)
           SELECT ?, u.id, 'owner', ? FROM users u WHERE u.email = ? AND EXISTS (SELECT 1 FROM workspaces WHERE id = ?)`,
        )
        .bind(workspaceId, now, email, workspaceId),
    ])
    row = await firstMembership(db, email)
    if (!row) throw new Error(`Could not create a workspace for a new user`)
  }
  return { user: { id: row.user_id, email: row.email }, workspace: { id: row.workspace_id, name: row.workspace_name } }
}

/** True when the user belongs to the workspace. */
export async function isMember(db: D1Database, userId: string, workspaceId: string): Promise<boolean> {
  const row = await db
    .prepare('SELECT 1 AS ok FROM workspace_members WHERE user_id = ? AND workspace_id = ?')
    .bind(userId, workspaceId)
    .first()
  return row !== null
}

/** Every workspace `userId` is a member of, oldest membership first; `current` marks `currentId`. */
export async function listMemberships(
  db: D1Database,
  userId: string,
  currentId: string,
): Promise<{ id: string; name: string; role: string; current: boolean }[]> {
  const { results } = await db
    .prepare(
      `SELECT w.id, w.name, m.role FROM workspace_members m JOIN workspaces w ON w.id = m.workspace_id
        WHERE m.user_id = ? ORDER BY m.created_at, w.id`,
    )
    .bind(userId)
    .all<{ id: string; name: string; role: string }>()
  return results.map((w) => ({ ...w, current: w.id === currentId }))
}
