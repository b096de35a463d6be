/**
 * /docs: the API reference. Scalar's standalone renderer (/vendor/scalar-api-reference.js, copied
 * from node_modules by scripts/build-web.ts) draws this origin's /openapi.json. The
 * renderer writes curl and other HTTP clients' examples itself; this module adds one example per
 * operation for the TypeScript SDK (`cutout.api.<METHOD>(path, …)`, typed from the same document),
 * so the page never has a sample that the document does not back.
 */
import { setUpHeader } from './header'

interface ScalarGlobal {
  createApiReference(selector: string, config: Record<string, unknown>): unknown
}

type Operation = {
  parameters?: { in: string; name: string }[]
  requestBody?: { content?: Record<string, unknown> }
  'x-codeSamples'?: { lang: string; label: string; source: string }[]
}
type OpenApiDocument = { paths: Record<string, Record<string, Operation>> }

const METHODS = ['get', 'put', 'post', 'patch', 'delete']

/** The `params` object of an SDK call: each path and query parameter with a placeholder. */
function paramsSource(operation: Operation): string | undefined {
  const groups: string[] = []
  for (const where of ['path', 'query']) {
    const names = (operation.parameters ?? []).filter((p) => p.in === where).map((p) => p.name)
    if (names.length) groups.push(`${where}: { ${names.map((n) => `${JSON.stringify(n)}: '…'`).join(', ')} }`)
  }
  return groups.length ? `params: { ${groups.join(', ')} }` : undefined
}

/** The TypeScript SDK's call of one operation. */
export function sdkSample(method: string, path: string, operation: Operation): string {
  const options = [paramsSource(operation)]
  if (operation.requestBody) options.push('body: { /* the request body below */ }')
  const args = options.filter(Boolean)
  const call = args.length
    ? `cutout.api.${method.toUpperCase()}('${path}', {\n  ${args.join(',\n  ')},\n})`
    : `cutout.api.${method.toUpperCase()}('${path}')`
  return [
    "import { Cutout } from '@cutout/sdk'",
    '',
    `const cutout = new Cutout({ baseUrl: '${location.origin}', apiKey: process.env.CUTOUT_API_KEY })`,
    `const { data, error } = await ${call}`,
  ].join('\n')
}

/** The document with an SDK example first on every operation. */
export function withSdkSamples(document: OpenApiDocument): OpenApiDocument {
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      const operation = item[method]
      if (!operation) continue
      const sample = { lang: 'typescript', label: 'SDK (@cutout/sdk)', source: sdkSample(method, path, operation) }
      operation['x-codeSamples'] = [sample, ...(operation['x-codeSamples'] ?? [])]
    }
  }
  return document
}

/**
 * Loads the renderer. Its bundled zod probes for eval with `Function('')`, which the CSP refuses
 * (and reports); `jitless` must be set on zod's global config before the bundle runs, so this
 * module sets it and only then adds the script.
 */
async function loadRenderer(): Promise<ScalarGlobal | undefined> {
  ;(globalThis as { __zod_globalConfig?: object }).__zod_globalConfig = { jitless: true }
  const script = document.createElement('script')
  script.src = '/vendor/scalar-api-reference.js'
  const loaded = new Promise((resolve, reject) => {
    script.addEventListener('load', resolve)
    script.addEventListener('error', reject)
  })
  document.head.append(script)
  await loaded
  return (window as unknown as { Scalar?: ScalarGlobal }).Scalar
}

async function main(): Promise<void> {
  const mount = document.getElementById('reference')
  if (!mount) return
  const [scalar, res] = await Promise.all([loadRenderer().catch(() => undefined), fetch('/openapi.json')])
  if (!scalar || !res.ok) {
    mount.textContent = `The reference could not be drawn; the raw document is at /openapi.json (${res.status}).`
    return
  }
  // The renderer hydrates a mount that has children; this one only held the loading line.
  mount.replaceChildren()
  scalar.createApiReference('#reference', {
    content: withSdkSamples((await res.json()) as OpenApiDocument),
    // Fonts and the "try it" proxy would be fetched from the renderer's own servers: the page uses
    // system fonts and calls this origin directly (the CSP allows nothing else).
    withDefaultFonts: false,
    hideClientButton: true,
    telemetry: false,
    // Hosted services of the renderer's maker (an AI chat, MCP generation, a toolbar that deploys
    // to its cloud): this page talks to this origin only.
    agent: { disabled: true },
    mcp: { disabled: true },
    showDeveloperTools: 'never',
    documentDownloadType: 'json',
    defaultHttpClient: { targetKey: 'shell', clientKey: 'curl' },
    servers: [{ url: location.origin, description: 'This service' }],
  })
}

setUpHeader()
void main()
