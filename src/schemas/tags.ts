/**
 * @module
 * The OpenAPI document's tags, each with what its operations are for: the reference (/docs) groups
 * operations under them, and a route's `tags` must name one of these (Spectral's
 * `operation-tag-defined`, scripts/lint-openapi.ts).
 */
export const TAGS = [
  { name: 'Processing', description: 'Background removal and the experimental virtual try-on: each request is a job.' },
  {
    name: 'Uploads',
    description: 'Reserve an upload, send its bytes, and complete it: an image to process by its id.',
  },
  { name: 'Jobs', description: 'A job’s status, stages, events and result, and cancelling it.' },
  { name: 'Batches', description: 'Background removal for many uploads at once, and the batch’s progress.' },
  {
    name: 'Projects',
    description: 'Editing a removal’s mask: revisions (brush strokes, recipes), refinements and exports.',
  },
  { name: 'Catalog images', description: 'Marketplace-ready product photos made from reference shots.' },
  { name: 'Usage', description: 'Credits left, or an anonymous device’s allowance.' },
  { name: 'Webhooks', description: 'Endpoints that receive a workspace’s events, and their deliveries.' },
  { name: 'API keys', description: 'A workspace’s API keys: create (the secret is shown once), list, revoke.' },
  { name: 'Sign-in', description: 'Email sign-in, sessions and the signed-in user’s workspaces.' },
  {
    name: 'Device authorization',
    description: 'Signing in a CLI or other device by a code the user approves in a browser.',
  },
  { name: 'Service', description: 'Liveness, readiness and this contract.' },
] as const
