/**
 * @module
 * Read-and-manage commands: `jobs` (recent jobs, newest first), `usage` (credits), and
 * `keys create|list|revoke` (a key's secret is printed once, at creation).
 */
import type { Schemas } from '@cutout/sdk'
import type { GlobalOptions } from '../context.js'
import { authedClient, Output } from '../context.js'

const table = (rows: string[][]) => {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)))
  return rows
    .map((r) =>
      r
        .map((cell, c) => cell.padEnd(widths[c]))
        .join('  ')
        .trimEnd(),
    )
    .join('\n')
}

async function setup(options: GlobalOptions) {
  const out = new Output(!!options.json)
  return { out, cutout: await authedClient(options, (line) => out.info(line)) }
}

export async function jobs(options: GlobalOptions & { limit: number; status?: string }): Promise<void> {
  const { out, cutout } = await setup(options)
  const status = options.status as 'succeeded' | undefined
  const page = await cutout.listJobs({ limit: options.limit, ...(status ? { status } : {}) })
  out.result(page, () =>
    page.jobs.length
      ? table([['ID', 'STATUS', 'STAGE', 'CREATED'], ...page.jobs.map((j) => [j.id, j.status, j.stage, j.createdAt])])
      : 'No jobs yet',
  )
}

export async function usage(options: GlobalOptions): Promise<void> {
  const { out, cutout } = await setup(options)
  const u = await cutout.usage()
  out.result(u, () =>
    u.kind === 'anonymous'
      ? `Anonymous: ${u.remaining} of ${u.limit} left today`
      : `Credits: ${u.available} available of ${u.limit} (${u.held} held, ${u.used} used); period ends ${u.periodEndsAt}`,
  )
}

export async function keysList(options: GlobalOptions): Promise<void> {
  const { out, cutout } = await setup(options)
  const { keys } = await cutout.listApiKeys()
  out.result({ keys }, () =>
    keys.length
      ? table([
          ['ID', 'NAME', 'PREFIX', 'SCOPES', 'CREATED'],
          ...keys.map((k) => [k.id, k.name, k.prefix, k.scopes.join(','), k.createdAt]),
        ])
      : 'No API keys',
  )
}

export async function keysCreate(options: GlobalOptions & { name?: string; scopes?: string }): Promise<void> {
  const { out, cutout } = await setup(options)
  const scopes = options.scopes?.split(',').map((s) => s.trim()) as Schemas['ApiKeyCreate']['scopes']
  const key = await cutout.createApiKey({
    ...(options.name ? { name: options.name } : {}),
    ...(scopes ? { scopes } : {}),
  })
  out.result(key, `${key.value}\n(key ${key.id}; the secret above is shown only now: store it safely)`)
}

export async function keysRevoke(id: string, options: GlobalOptions): Promise<void> {
  const { out, cutout } = await setup(options)
  await cutout.revokeApiKey(id)
  out.result({ revoked: id }, `Revoked ${id}`)
}
