/**
 * The catalog capability: `createCatalogGenerator` builds the configured backend
 * (generator.ts `CatalogConfig`), `catalogRoutes` adds `POST /v1/catalog` to the app.
 */
import { createCpuGenerator } from './cpu.js'
import type { CatalogConfig, CatalogGenerator } from './generator.js'
import { createRemoteGenerator } from './remote.js'

export { catalogConfigFromEnv, type CatalogConfig, type CatalogGenerator } from './generator.js'
export { catalogRoutes } from './route.js'

/**
 * @example const catalog = createCatalogGenerator(catalogConfigFromEnv(process.env))
 */
export function createCatalogGenerator(config: CatalogConfig): CatalogGenerator {
  if (config.backend === 'remote') return createRemoteGenerator(config)
  return config.superResolution ? createCpuGenerator() : createCpuGenerator({ upscaler: null })
}
