/**
 * Builds the web page (web/) into web/dist, the directory wrangler.toml's `[assets]` serves:
 * each entry script bundled by esbuild (the page ships no framework, so one small file per page),
 * the HTML and CSS copied beside it, and a `_headers` file giving every page and asset the security
 * headers of DESIGN.md §3 (written from src/middleware/security-headers.ts, their one source; the
 * assets are served without running the Worker, so its middleware cannot add them). `npm start`
 * and the test stages run this first, so the page a test drives is always the one in the sources.
 * `--watch` is not offered: a rebuild is ~50 ms.
 */
import { copyFileSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'
import { assetHeadersFile } from '../src/middleware/security-headers'

const web = join(dirname(fileURLToPath(import.meta.url)), '..', 'web')
const out = join(web, 'dist')

export async function buildWeb(): Promise<void> {
  rmSync(out, { recursive: true, force: true })
  mkdirSync(out, { recursive: true })
  await build({
    entryPoints: { index: join(web, 'src', 'index.ts'), device: join(web, 'src', 'device.ts') },
    outdir: out,
    bundle: true,
    format: 'esm',
    target: 'es2022',
    minify: true,
    sourcemap: 'linked',
    logLevel: 'warning',
  })
  for (const file of readdirSync(web)) {
    if (file.endsWith('.html') || file.endsWith('.css') || file.endsWith('.svg'))
      copyFileSync(join(web, file), join(out, file))
  }
  // Wrangler reads `_headers` from the assets directory and does not serve it as a file.
  writeFileSync(join(out, '_headers'), assetHeadersFile())
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await buildWeb()
  console.log(`web page built into ${out}`)
}
