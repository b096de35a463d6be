// Types for verify-webhook.mjs (the tests import it).
export declare const TOLERANCE_SECONDS: number
export declare function verifyWebhook(
  rawBody: string,
  headers: Headers | Record<string, string | string[] | undefined>,
  secret: string,
  now?: number,
): { id: string; event: any }
