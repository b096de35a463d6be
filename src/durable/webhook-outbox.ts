/**
 * @module
 * WebhookOutbox: one Durable Object per webhook endpoint; signed deliveries with retries on alarms.
 */
import { DurableObject } from 'cloudflare:workers'
import type { Env } from '../env'

export class WebhookOutbox extends DurableObject<Env> {}
