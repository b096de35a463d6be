/**
 * @module
 * Outgoing email behind one small interface, `EmailSender`.
 *
 * - `SendEmailBindingSender`: production, through Cloudflare's `send_email` binding (`env.EMAIL`).
 *   The message is a hand-built RFC 5322 text/plain message wrapped in `EmailMessage`.
 * - `DevOutboxSender`: local mode and tests; messages land in the D1 table `dev_outbox`, read at
 *   `GET /v1/dev/outbox` (only when `ENVIRONMENT` is `development` or `test`).
 */
import type { Env } from '../env'
import { ApiError } from '../errors'
import { iso } from '../lib/time'

export interface OutgoingEmail {
  to: string
  subject: string
  text: string
}

export interface EmailSender {
  send(message: OutgoingEmail): Promise<void>
}

export const DEFAULT_EMAIL_FROM = 'no-reply@cutout.dev'

/** Local conveniences (the dev outbox) exist only here, never in production. */
export const isLocalEnvironment = (env: Pick<Env, 'ENVIRONMENT'>) =>
  env.ENVIRONMENT === 'development' || env.ENVIRONMENT === 'test'

const CRLF = '\r\n'

function assertHeaderSafe(name: string, value: string): void {
  // A CR or LF in a header value would let it start new headers (header injection).
  if (/[\r\n]/.test(value)) throw new Error(`Email header ${name} must not contain line breaks`)
}

/** RFC 2047 encoded-word for a non-ASCII subject; plain ASCII is kept as is. */
function encodeHeaderText(value: string): string {
  if (/^[\x20-\x7e]*$/.test(value)) return value
  const bytes = new TextEncoder().encode(value)
  let bin = ''
  for (const b of bytes) bin += String.fromCharCode(b)
  return `=?UTF-8?B?${btoa(bin)}?=`
}

/** Base64 body in lines of 76 characters (RFC 2045 §6.8). */
function base64Lines(text: string): string {
  const bytes = new TextEncoder().encode(text.replace(/\r?\n/g, CRLF))
  let bin = ''
  for (const b of bytes) bin += String.fromCharCode(b)
  return (btoa(bin).match(/.{1,76}/g) ?? ['']).join(CRLF)
}

/**
 * Builds a small RFC 5322 message: text/plain, UTF-8, base64 body (safe for any text and any
 * line length).
 * @example
 * buildMimeMessage({ from: 'no-reply@example.com', to: 'a@example.com', subject: 'Hi', text: 'Hello' })
 */
export function buildMimeMessage(message: OutgoingEmail & { from: string; date?: Date; messageId?: string }): string {
  assertHeaderSafe('From', message.from)
  assertHeaderSafe('To', message.to)
  assertHeaderSafe('Subject', message.subject)
  const domain = message.from.split('@')[1] ?? 'localhost'
  const headers = [
    `From: ${message.from}`,
    `To: ${message.to}`,
    `Subject: ${encodeHeaderText(message.subject)}`,
    `Date: ${(message.date ?? new Date()).toUTCString().replace('GMT', '+0000')}`,
    `Message-ID: <${message.messageId ?? crypto.randomUUID()}@${domain}>`,
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=utf-8',
    'Content-Transfer-Encoding: base64',
  ]
  return headers.join(CRLF) + CRLF + CRLF + base64Lines(message.text) + CRLF
}

/** Production sender on the `send_email` binding. */
export class SendEmailBindingSender implements EmailSender {
  constructor(
    private readonly binding: SendEmail,
    private readonly from: string,
  ) {}

  async send(message: OutgoingEmail): Promise<void> {
    // Loaded when first used: the module exists only in workerd, and only this path needs it.
    const { EmailMessage } = await import('cloudflare:email')
    const raw = buildMimeMessage({ ...message, from: this.from })
    await this.binding.send(new EmailMessage(this.from, message.to, raw))
  }
}

/** Local-mode sender: keeps the message in D1 for `GET /v1/dev/outbox`. */
export class DevOutboxSender implements EmailSender {
  constructor(private readonly db: D1Database) {}

  async send(message: OutgoingEmail): Promise<void> {
    await this.db
      .prepare('INSERT INTO dev_outbox (id, to_address, subject, text, created_at) VALUES (?, ?, ?, ?, ?)')
      .bind(crypto.randomUUID(), message.to, message.subject, message.text, iso())
      .run()
  }
}

/**
 * The sender for this deployment: the `send_email` binding when configured; otherwise the dev
 * outbox in local mode. Production without a binding cannot send, so it answers 503 rather than
 * pretend a code went out.
 */
export function emailSenderFor(env: Env): EmailSender {
  if (env.EMAIL) return new SendEmailBindingSender(env.EMAIL, env.EMAIL_FROM || DEFAULT_EMAIL_FROM)
  if (isLocalEnvironment(env)) return new DevOutboxSender(env.DB)
  throw new ApiError('processor_unavailable', 'Email delivery is not configured', { retryAfter: 60 })
}

export interface OutboxMessage {
  id: string
  to: string
  subject: string
  text: string
  createdAt: string
}

/** The newest messages of the dev outbox, optionally for one address. */
export async function readDevOutbox(db: D1Database, to?: string, limit = 50): Promise<OutboxMessage[]> {
  const where = to ? 'WHERE to_address = ?' : ''
  const stmt = db.prepare(
    `SELECT id, to_address AS "to", subject, text, created_at AS createdAt FROM dev_outbox ${where}
      ORDER BY created_at DESC, rowid DESC LIMIT ?`,
  )
  const { results } = await (to ? stmt.bind(to, limit) : stmt.bind(limit)).all<OutboxMessage>()
  return results
}
