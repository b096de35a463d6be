/**
 * @module
 * Hands every request its services (src/services/context.ts): the parsed config, the inference
 * client and the clock, made once here and read with `c.get('services')`.
 */
import { createMiddleware } from 'hono/factory'
import type { AppEnv } from '../env'
import { createServices } from '../services/context'

export const services = () =>
  createMiddleware<AppEnv>(async function services(c, next) {
    c.set('services', createServices(c.env))
    await next()
  })
