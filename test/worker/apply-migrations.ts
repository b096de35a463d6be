import { applyD1Migrations, env, reset } from 'cloudflare:test'

// All files share one workerd (vitest.worker.config.mts, `isolate: false`). Each still starts
// from an empty world, as it did with a workerd of its own: `reset()` deletes every Durable
// Object's storage, which in local mode holds D1 and R2 too, and with them the anonymous rate
// counters, device records and the previous file's jobs (their runners are stopped with it).
await reset()
await applyD1Migrations(env.DB, env.TEST_MIGRATIONS)
