/**
 * @module
 * Worker entry: the HTTP app, the retention sweep (and the settling of abandoned catalog calls),
 * and the Durable Object classes.
 */
import { createApp } from './app'
import type { Env } from './env'
import { sweepRetention } from './services/retention'

export { AnonymousClient } from './durable/anonymous-client'
export { JobRun } from './durable/job-run'
export { ProjectStream } from './durable/project-stream'
export { WebhookOutbox } from './durable/webhook-outbox'
export { Workspace } from './durable/workspace'

const app = createApp()

export default {
  fetch: app.fetch,
  async scheduled(controller, env, ctx) {
    ctx.waitUntil(sweepRetention(env, new Date(controller.scheduledTime)))
  },
} satisfies ExportedHandler<Env>
