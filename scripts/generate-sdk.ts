/**
 * `npm run sdk:generate`: rewrites sdk/src/schema.ts from the app's /openapi.json (see
 * scripts/lib/sdk-schema.ts). Run it after changing a route or schema; the SDK tests fail until then.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { generateSchema, SCHEMA_PATH } from './lib/sdk-schema'

const text = await generateSchema()
let previous = ''
try {
  previous = readFileSync(SCHEMA_PATH, 'utf8')
} catch {
  // first generation
}
if (previous === text) {
  console.log(`${SCHEMA_PATH}: up to date`)
} else {
  writeFileSync(SCHEMA_PATH, text)
  console.log(`${SCHEMA_PATH}: written (${text.length} characters)`)
}
