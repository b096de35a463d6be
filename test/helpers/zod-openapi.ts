/**
 * A setup file of the e2e stage, whose files share one process (vitest.e2e.config.mts,
 * `isolate: false`). @hono/zod-openapi gives zod schemas `.openapi()` only when they are made after
 * it is imported: the Worker's schemas (src/schemas) import it before the contract they extend
 * (src/contract, plain zod, shared with the inference server). A file that imports the contract
 * alone (web/test/screens.test.ts) would otherwise leave its schemas cached without it for the
 * files after it that build /openapi.json (the SDK's and the Python client's "up to date" checks).
 */
import '@hono/zod-openapi'
