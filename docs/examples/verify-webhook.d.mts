// Types for verify-webhook.mjs (the tests import it).
export declare const TOLERANCE_SECONDS: number

/** The event envelope of SPEC.md §6. */
export interface WebhookEvent {
  id: string
  type: string
  occurredAt: string
  workspaceId: string
  aggregateId: string
  correlationId: string
  data: Record<string, unknown>
}

export declare function verifyWebhook(
  rawBody: string,
  headers: Headers | Record<string, string | string[] | undefined>,
  secret: string,
  now?: number,
): { id: string; event: WebhookEvent }
