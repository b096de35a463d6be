/**
 * The try-on capability: `createTryOnModel` builds the configured backend (model.ts
 * `TryOnConfig`), `tryOnRoutes` adds `POST /v1/try-on` to the app.
 */
import { createCpuTryOn } from './cpu.js'
import type { TryOnConfig, TryOnModel } from './model.js'
import { createRemoteTryOn } from './remote.js'

export { tryOnConfigFromEnv, type TryOnConfig, type TryOnModel } from './model.js'
export { tryOnRoutes } from './route.js'

/**
 * @example const tryOn = createTryOnModel(tryOnConfigFromEnv(process.env))
 */
export function createTryOnModel(config: TryOnConfig): TryOnModel {
  return config.backend === 'remote' ? createRemoteTryOn(config) : createCpuTryOn()
}
