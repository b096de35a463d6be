/**
 * The clients agree with /openapi.json, for every operation (issue 46 item 1): the generated files
 * are fresh (the SDK's schema, contract values, operation table and image sniffer; the Python
 * client's two files), and every operation says how it may be repeated (`x-cutout-retry`, from its
 * own declaration: schemas/retry.ts). The clients' behaviour per operation is tested against it
 * in sdk/test/operations.test.ts and clients/python/tests/test_retry.py. Seconds, no stack: the
 * contract stage.
 */
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { OPERATIONS_PATH, operationRows, operationsModule } from '../../scripts/lib/operation-table'
import { generatePython, PYTHON_OPERATIONS_PATH, PYTHON_SCHEMA_PATH } from '../../scripts/lib/python-client'
import {
  CONTRACT_PATH,
  fetchDocument,
  generateContract,
  generateImageSniff,
  generateSchema,
  IMAGE_SNIFF_PATH,
  SCHEMA_PATH,
} from '../../scripts/lib/sdk-schema'
import { retryRuleOf } from '../../src/schemas/retry'

const fresh = (path: string, text: string) =>
  expect(readFileSync(path, 'utf8') === text, `${path} is stale: run \`npm run sdk:generate\``).toBe(true)

describe('generated client files (else `npm run sdk:generate`)', () => {
  it('the SDK: schema.ts, contract.ts, operations.ts, image-sniff.ts', async () => {
    fresh(SCHEMA_PATH, await generateSchema())
    fresh(CONTRACT_PATH, generateContract())
    fresh(OPERATIONS_PATH, operationsModule(await operationRows()))
    fresh(IMAGE_SNIFF_PATH, generateImageSniff())
  })

  it('the Python client: _schema.py and _operations.py', async () => {
    const python = await generatePython()
    fresh(PYTHON_SCHEMA_PATH, python.schema)
    fresh(PYTHON_OPERATIONS_PATH, python.operations)
  })
})

type Operation = { operationId: string; parameters?: { name: string; in: string }[]; 'x-cutout-retry'?: string }

describe('every operation says how a client may repeat it', () => {
  it('from its own declaration (its method, and whether it takes Idempotency-Key), but two marked by their routes', async () => {
    // The routes' own marks, each with its reason beside it (routes/api-keys.ts, routes/uploads.ts).
    const marked: Record<string, string> = { createApiKey: 'once', completeUpload: 'safe' }
    const doc = (await fetchDocument()) as { paths: Record<string, Record<string, Operation>> }
    const rules: Record<string, string> = {}
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const declared = retryRuleOf(method, { parameters: op.parameters })
        expect(op['x-cutout-retry'], `${method} ${path}`).toBe(marked[op.operationId] ?? declared)
        rules[`${method.toUpperCase()} ${path}`] = op['x-cutout-retry'] ?? ''
      }
    }
    expect(rules).toMatchObject({
      'POST /v1/removals': 'idempotency-key',
      'POST /v1/virtual-try-ons': 'idempotency-key',
      'POST /v1/projects/{id}/refinements': 'idempotency-key',
      'POST /v1/api-keys': 'once',
      'POST /v1/uploads': 'once',
      'POST /v1/uploads/{id}/complete': 'safe',
      'GET /v1/jobs/{id}': 'safe',
    })
  })
})
