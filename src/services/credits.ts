/**
 * @module
 * Credits (SPEC.md §1): a credit is held when a job is accepted, charged on success and released
 * on failure or cancellation. Every transition is one D1 batch (a transaction), and a hold row
 * moves out of `held` exactly once, so no path can charge or release twice.
 */
import { ApiError } from '../errors'
import { nextPeriodEnd } from '../lib/window'

export interface Usage {
  kind: 'workspace'
  limit: number
  available: number
  held: number
  used: number
  periodEndsAt: string
}

/**
 * Starts the next period of an account whose period has ended: `used` back to 0 and the end moved
 * to the first of the month after `now`. Credits still held carry over, and are charged or
 * released in the period their job ends in. Runs before every read of the balance and every hold,
 * so no cron has to have run first.
 */
export function renewStatement(db: D1Database, workspaceId: string, now = new Date()): D1PreparedStatement {
  return db
    .prepare('UPDATE credit_accounts SET used = 0, period_ends_at = ? WHERE workspace_id = ? AND period_ends_at <= ?')
    .bind(nextPeriodEnd(now), workspaceId, now.toISOString())
}

/** Where the account update of `holdStatements` stands in them: its `changes` say whether the credits were taken. */
export const HOLD_RESULT = 1

/**
 * Statements that take one credit per job and record each hold, to run in the same batch as the
 * job inserts: all of them or none. The hold rows are written only if the account update changed
 * a row, so the check and the take are one atomic step even under concurrent requests. A period
 * that has ended is renewed first, in the same batch.
 */
export function holdStatements(
  db: D1Database,
  workspaceId: string,
  jobIds: string[],
  guard?: { sql: string; args: unknown[] },
): D1PreparedStatement[] {
  return [
    renewStatement(db, workspaceId),
    db
      .prepare(
        `UPDATE credit_accounts SET held = held + ? WHERE workspace_id = ? AND held + used + ? <= credit_limit AND ${guard?.sql ?? '1'}`,
      )
      .bind(jobIds.length, workspaceId, jobIds.length, ...(guard?.args ?? [])),
    db
      .prepare(
        "INSERT INTO credit_holds (job_id, workspace_id, status) SELECT value, ?, 'held' FROM json_each(?) WHERE changes() = 1",
      )
      .bind(workspaceId, JSON.stringify(jobIds)),
  ]
}

export function quotaExhausted(): ApiError {
  return new ApiError('quota_exhausted', 'No credits remain in this period; see GET /v1/usage')
}

/** Settles a hold: `charge` moves it to used, `release` gives it back. Idempotent. */
export function settleStatements(db: D1Database, jobId: string, outcome: 'charge' | 'release'): D1PreparedStatement[] {
  const account = outcome === 'charge' ? 'SET held = held - 1, used = used + 1' : 'SET held = held - 1'
  return [
    db
      .prepare(
        `UPDATE credit_accounts ${account} WHERE workspace_id =
           (SELECT workspace_id FROM credit_holds WHERE job_id = ? AND status = 'held')`,
      )
      .bind(jobId),
    db
      .prepare(
        "UPDATE credit_holds SET status = ?, settled_at = strftime('%Y-%m-%dT%H:%M:%fZ','now') WHERE job_id = ? AND status = 'held'",
      )
      .bind(outcome === 'charge' ? 'charged' : 'released', jobId),
  ]
}

/** The balance of the running period (renewing an ended one first). */
export async function getUsage(db: D1Database, workspaceId: string): Promise<Usage> {
  const [, read] = await db.batch<{ credit_limit: number; held: number; used: number; period_ends_at: string }>([
    renewStatement(db, workspaceId),
    db
      .prepare('SELECT credit_limit, held, used, period_ends_at FROM credit_accounts WHERE workspace_id = ?')
      .bind(workspaceId),
  ])
  const row = read.results[0]
  if (!row) {
    return { kind: 'workspace', limit: 0, available: 0, held: 0, used: 0, periodEndsAt: new Date().toISOString() }
  }
  return {
    kind: 'workspace',
    limit: row.credit_limit,
    available: Math.max(0, row.credit_limit - row.held - row.used),
    held: row.held,
    used: row.used,
    periodEndsAt: row.period_ends_at,
  }
}
