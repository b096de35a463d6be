/**
 * The committed generated files match the API: regenerate the types from the app's /openapi.json
 * and the contract values from src/contract, in memory, and compare. Fix a failure with
 * `npm run sdk:generate`.
 */
import { readFileSync } from 'node:fs'
import { expect, it } from 'vitest'
import { CONTRACT_PATH, generateContract, generateSchema, SCHEMA_PATH } from '../../scripts/lib/sdk-schema'

it('sdk/src/schema.ts is up to date with /openapi.json (else run `npm run sdk:generate`)', async () => {
  const committed = readFileSync(SCHEMA_PATH, 'utf8')
  const fresh = await generateSchema()
  expect(committed === fresh, 'sdk/src/schema.ts is stale: run `npm run sdk:generate`').toBe(true)
})

it('sdk/src/contract.ts is up to date with src/contract (else run `npm run sdk:generate`)', () => {
  const committed = readFileSync(CONTRACT_PATH, 'utf8')
  expect(committed === generateContract(), 'sdk/src/contract.ts is stale: run `npm run sdk:generate`').toBe(true)
})
