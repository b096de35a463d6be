/**
 * `npm run sdk:generate`: rewrites sdk/src/schema.ts from the app's /openapi.json and
 * sdk/src/contract.ts from src/contract (see scripts/lib/sdk-schema.ts), and the Python client's
 * generated types and operations (scripts/lib/python-client.ts). Run it after changing a route,
 * a schema or a contract value the SDK copies; the SDK tests fail until then.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { generatePython, PYTHON_OPERATIONS_PATH, PYTHON_SCHEMA_PATH } from './lib/python-client'
import { CONTRACT_PATH, generateContract, generateSchema, SCHEMA_PATH } from './lib/sdk-schema'

/** Writes `text` to `path` unless it already holds it. */
function write(path: string, text: string) {
  let previous = ''
  try {
    previous = readFileSync(path, 'utf8')
  } catch {
    // first generation
  }
  if (previous === text) {
    console.log(`${path}: up to date`)
  } else {
    writeFileSync(path, text)
    console.log(`${path}: written (${text.length} characters)`)
  }
}

write(SCHEMA_PATH, await generateSchema())
write(CONTRACT_PATH, generateContract())
const python = await generatePython()
write(PYTHON_SCHEMA_PATH, python.schema)
write(PYTHON_OPERATIONS_PATH, python.operations)
