/**
 * `npm start`'s local D1, opened once in this process for the migrations and the seed: what
 * `wrangler d1 migrations apply --local` and `wrangler d1 execute --local` do, without their cost.
 * Each of those runs loads wrangler's CLI, and wrangler (4.86, still 4.164) starts a new workerd for every batch
 * it sends (executeLocally): one to make the migrations table, one to list it, one per migration
 * file, one for the seed. On a fresh state that was 13.8 s of a 19.5 s start here (session 16).
 *
 * Same database, same bookkeeping, so either can take over from the other: the D1 binding of
 * wrangler.toml read by wrangler's own reader, persisted where `wrangler dev --persist-to` keeps it
 * (Miniflare with the options wrangler's executeLocally passes), statements split by wrangler's
 * own splitter, and applied migrations recorded in wrangler's table with its schema, each file with
 * its record in one batch as @cloudflare/vitest-plugin's applyD1Migrations does.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { D1Database } from '@cloudflare/workers-types'
import { convertV4MiniflareOptions, Miniflare } from 'miniflare'
import { unstable_readConfig, unstable_splitSqlQuery } from 'wrangler'

/** What is read of a `[[d1_databases]]` entry (wrangler's Config type is not in its published types). */
interface D1Binding {
  binding: string
  database_id?: string
  preview_database_id?: string
  migrations_dir?: string
  migrations_table?: string
}

/** One statement and its parameters (bound, never spliced into the SQL). */
export interface Statement {
  sql: string
  params?: (string | number | null)[]
}

export interface LocalD1 {
  /** Applies the migrations not yet recorded, in file order; returns the names it applied. */
  migrate(): Promise<string[]>
  /** Runs `statements` as one batch: all of them or none. */
  batch(statements: Statement[]): Promise<void>
  /** The rows of one query. */
  all<T>(statement: Statement): Promise<T[]>
  close(): Promise<void>
}

/** Opens the D1 database bound as `binding` in `root`'s wrangler.toml, persisted under `stateDir`. */
export async function openLocalD1(root: string, stateDir: string, binding = 'DB'): Promise<LocalD1> {
  const config = unstable_readConfig({ config: join(root, 'wrangler.toml') })
  const entry = (config.d1_databases as D1Binding[]).find((d) => d.binding === binding)
  if (!entry) throw new Error(`wrangler.toml has no D1 database bound as ${binding}`)
  // The id wrangler dev and executeLocally give Miniflare, which names the database's file after it.
  const id = entry.preview_database_id ?? entry.database_id
  if (!id) throw new Error(`wrangler.toml's D1 database ${binding} has no database_id`)
  const migrationsDir = join(root, entry.migrations_dir ?? 'migrations')
  const table = entry.migrations_table ?? 'd1_migrations'

  const mf = new Miniflare(
    convertV4MiniflareOptions({
      modules: true,
      script: '',
      resourcePersistencePath: join(stateDir, 'v3'),
      d1Databases: { DB: id },
    }),
  )
  const db = (await mf.getD1Database('DB')) as unknown as D1Database
  const prepare = ({ sql, params = [] }: Statement) => db.prepare(sql).bind(...params)

  return {
    async migrate() {
      await db
        .prepare(
          `CREATE TABLE IF NOT EXISTS ${table}(
		id         INTEGER PRIMARY KEY AUTOINCREMENT,
		name       TEXT UNIQUE,
		applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL
);`,
        )
        .run()
      const recorded = await db.prepare(`SELECT name FROM ${table}`).all<{ name: string }>()
      const done = new Set(recorded.results.map((r) => r.name))
      const pending = readdirSync(migrationsDir)
        .filter((name) => name.endsWith('.sql') && !done.has(name))
        .sort()
      for (const name of pending) {
        const statements = unstable_splitSqlQuery(readFileSync(join(migrationsDir, name), 'utf8'))
        await db.batch([
          ...statements.map((sql) => db.prepare(sql)),
          db.prepare(`INSERT INTO ${table} (name) VALUES (?)`).bind(name),
        ])
      }
      return pending
    },
    async batch(statements) {
      await db.batch(statements.map(prepare))
    },
    async all<T>(statement: Statement) {
      return (await prepare(statement).all<T>()).results
    },
    close: () => mf.dispose(),
  }
}
