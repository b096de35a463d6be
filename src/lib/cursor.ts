/**
 * @module
 * Opaque list cursors (DESIGN.md §3 "GET /v1/jobs query"): newest first, the cursor is the
 * (createdAt, id) of the last item returned. Jobs and projects page the same way.
 */
import { ApiError } from '../errors'

interface Cursored {
  created_at: string
  id: string
}

/** One page of `limit` from `results` (fetched with `limit + 1`), and the cursor of the next. */
export function pageOf<T extends Cursored>(results: T[], limit: number): { rows: T[]; nextCursor: string | null } {
  const page = results.slice(0, limit)
  const last = page.at(-1)
  return { rows: page, nextCursor: results.length > limit && last ? encodeCursor(last) : null }
}

export function encodeCursor(row: Cursored): string {
  return btoa(`${row.created_at}|${row.id}`).replaceAll('=', '')
}

export function decodeCursor(cursor: string): [string, string] {
  try {
    const [createdAt, id] = atob(cursor).split('|')
    if (createdAt && id) return [createdAt, id]
  } catch {
    // fall through
  }
  throw new ApiError('invalid_input', 'Expected a cursor returned by a previous page', { field: 'cursor' })
}

/** The WHERE clause (and its arguments) for rows after `cursor`. */
export function afterCursor(cursor: string): { sql: string; args: string[] } {
  const [createdAt, id] = decodeCursor(cursor)
  return { sql: '(created_at < ? OR (created_at = ? AND id < ?))', args: [createdAt, createdAt, id] }
}

/**
 * A page of `table`'s rows matching `where` (with `args`), newest first, after `cursor`.
 * `table` and `where` are the caller's own SQL, never user input.
 */
export async function listPage<T extends Cursored>(
  db: D1Database,
  table: string,
  filter: { where: string[]; args: unknown[] },
  q: { limit?: number; cursor?: string },
): Promise<{ rows: T[]; nextCursor: string | null }> {
  const limit = q.limit ?? 20
  const where = [...filter.where]
  const args = [...filter.args]
  if (q.cursor) {
    const after = afterCursor(q.cursor)
    where.push(after.sql)
    args.push(...after.args)
  }
  const { results } = await db
    .prepare(`SELECT * FROM ${table} WHERE ${where.join(' AND ')} ORDER BY created_at DESC, id DESC LIMIT ?`)
    .bind(...args, limit + 1)
    .all<T>()
  return pageOf(results, limit)
}
