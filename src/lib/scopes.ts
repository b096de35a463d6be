/** The API key scopes of SPEC.md §5.3: what a credential may do. Schemas and services both read it. */
export const SCOPES = ['images:write', 'jobs:read', 'webhooks:write', 'keys:write', 'tryon:write'] as const
export type Scope = (typeof SCOPES)[number]
