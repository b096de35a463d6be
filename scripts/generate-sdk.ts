/**
 * `npm run sdk:generate`: rewrites sdk/src/schema.ts from the app's /openapi.json,
 * sdk/src/contract.ts from src/contract, sdk/src/operations.ts (every operation's retry rule) and sdk/src/image-sniff.ts from src/lib/image-sniff.ts
 * (see scripts/lib/sdk-schema.ts), and the Python client's generated types and operations
 * (scripts/lib/python-client.ts). Run it after changing a route, a schema, a contract value or
 * code the SDK copies; the SDK tests fail until then.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { OPERATIONS_PATH, operationRows, operationsModule } from './lib/operation-table'
import { generatePython, PYTHON_OPERATIONS_PATH, PYTHON_SCHEMA_PATH } from './lib/python-client'
import {
  CONTRACT_PATH,
  generateContract,
  generateImageSniff,
  generateSchema,
  IMAGE_SNIFF_PATH,
  SCHEMA_PATH,
} from './lib/sdk-schema'

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
write(OPERATIONS_PATH, operationsModule(await operationRows()))
write(IMAGE_SNIFF_PATH, generateImageSniff())
const python = await generatePython()
write(PYTHON_SCHEMA_PATH, python.schema)
write(PYTHON_OPERATIONS_PATH, python.operations)
