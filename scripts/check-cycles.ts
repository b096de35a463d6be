/**
 * `npm run lint` and `npm test`'s lint stage: fails on an import cycle that exists at run time in
 * the Worker, the inference server, the SDK, the CLI or the page (a cycle makes module order
 * matter: a value read during import can be undefined). Imports used only as types do not count:
 * the graph is esbuild's (its metafile), which compiles each file as the bundlers do and drops
 * them. dpdm finds and prints the cycles in that graph. dpdm's own parser needs the TypeScript
 * compiler per file to drop them (`transform`), which took ~4 CPU-s here against esbuild's ~1.
 */
import { fileURLToPath } from 'node:url'
import { type Dependency, parseCircular, prettyCircular } from 'dpdm'
import { build } from 'esbuild'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const SOURCES = ['src', 'inference-server/src', 'sdk/src', 'cli/src', 'web/src'].map((dir) => `${dir}/**/*.ts`)

const { metafile } = await build({
  entryPoints: SOURCES,
  absWorkingDir: ROOT,
  bundle: true,
  write: false,
  metafile: true,
  outdir: 'cycles-unused',
  platform: 'node',
  format: 'esm',
  // Packages are not ours to check (the CLI reaches the SDK through its package, as users do).
  packages: 'external',
  external: ['cloudflare:*'],
  logLevel: 'error',
})
/** dpdm's names for esbuild's kinds of import (its enum's values; the enum is not exported). */
const KIND = { 'dynamic-import': 'DynamicImport', 'require-call': 'CommonJS' } as Record<string, Dependency['kind']>
const kindOf = (kind: string) => KIND[kind] ?? ('StaticImport' as Dependency['kind'])
// dpdm's tree: each file's imports of our own files, dynamic ones too (a cycle through one still
// makes order matter when it runs).
const tree = Object.fromEntries(
  Object.entries(metafile.inputs).map(([file, input]) => [
    file,
    input.imports
      .filter((i) => !i.external)
      .map((i): Dependency => ({ issuer: file, request: i.original ?? i.path, kind: kindOf(i.kind), id: i.path })),
  ]),
)
const cycles = parseCircular(tree)
if (cycles.length) {
  console.error(`Import cycles at run time (break each; type-only imports do not count):\n${prettyCircular(cycles)}`)
  process.exit(1)
}
console.log(`No import cycle at run time among ${Object.keys(tree).length} files (${SOURCES.join(', ')}).`)
