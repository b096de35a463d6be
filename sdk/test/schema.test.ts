/**
 * The committed generated types match the API: regenerate from the app's /openapi.json in memory
 * and compare. Fix a failure with `npm run sdk:generate`.
 */
import { readFileSync } from 'node:fs'
import { expect, it } from 'vitest'
import { generateSchema, SCHEMA_PATH } from '../../scripts/lib/sdk-schema'

it('sdk/src/schema.ts is up to date with /openapi.json (else run `npm run sdk:generate`)', async () => {
  const committed = readFileSync(SCHEMA_PATH, 'utf8')
  const fresh = await generateSchema()
  expect(committed === fresh, 'sdk/src/schema.ts is stale: run `npm run sdk:generate`').toBe(true)
})
