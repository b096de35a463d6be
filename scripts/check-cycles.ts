/**
 * `npm run lint` and `npm test`'s lint stage: fails on an import cycle that exists at run time in
 * the Worker, the inference server, the SDK, the CLI or the page (a cycle makes module order
 * matter: a value read during import can be undefined). Imports used only as types do not count:
 * dpdm (`transform`) compiles each file as the bundlers do first, which drops them.
 */
import { fileURLToPath } from 'node:url'
import { parseCircular, parseDependencyTree, prettyCircular } from 'dpdm'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const SOURCES = ['src', 'inference-server/src', 'sdk/src', 'cli/src', 'web/src'].map((dir) => `${dir}/**/*.ts`)

const tree = await parseDependencyTree(SOURCES, {
  context: ROOT,
  cwd: ROOT,
  transform: true,
  // Packages and built output are not ours to check (the CLI reaches the SDK through its package).
  exclude: /\/node_modules\/|\/dist\//,
})
const cycles = parseCircular(tree)
if (cycles.length) {
  console.error(`Import cycles at run time (break each; type-only imports do not count):\n${prettyCircular(cycles)}`)
  process.exit(1)
}
const checked = Object.values(tree).filter((deps) => deps !== null).length
console.log(`No import cycle at run time among ${checked} files (${SOURCES.join(', ')}).`)
