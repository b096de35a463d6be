/**
 * @module
 * What handlers and services are handed instead of building it where they use it (as unkey's
 * `apps/api` hands its handlers a `services` object on the context): the deployment's parsed
 * `config`, the one inference client, and the clock. `createServices` is the one place they are
 * made: per request by the `services` middleware (`c.get('services')`), and by each Durable
 * Object in its constructor. A test hands in another client through `overrides`.
 */
import { type Config, loadConfig } from '../config'
import type { Env } from '../env'
import { InferenceClient } from './inference'

export interface Services {
  config: Config
  inference: InferenceClient
  /** Milliseconds since the epoch. */
  now: () => number
}

export function createServices(env: Env, overrides: Partial<Services> = {}): Services {
  const config = overrides.config ?? loadConfig(env)
  // Made on first use: most requests (reads, the documents) never call the inference server.
  let inference = overrides.inference
  return {
    config,
    get inference() {
      inference ??= InferenceClient.fromEnv(env, config.deadlines.readyTimeoutMs)
      return inference
    },
    now: overrides.now ?? (() => Date.now()),
  }
}
