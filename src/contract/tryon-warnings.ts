/**
 * @module
 * The notices on a try-on result (Job.warnings), without a schema library: the web page
 * (web/src/try-on-warnings.ts) bundles them, and zod in a page bundle probes `new Function`, which
 * the page's CSP refuses. src/contract/tryon.ts re-exports them.
 */
export const TRYON_WARNINGS = {
  experimental: 'experimental_non_commercial',
  partialBody: 'partial_body',
  noPose: 'pose_not_detected',
} as const
