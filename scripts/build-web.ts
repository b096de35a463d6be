/**
 * Builds the web page (web/) into web/dist, the directory wrangler.toml's `[assets]` serves:
 * each entry script bundled by esbuild (the page ships no framework, so one small file per page),
 * the HTML (with the one site header of scripts/lib/site-header.ts put in) and CSS copied beside it, and a `_headers` file giving every page and asset the security
 * headers of DESIGN.md §3 (written from src/middleware/security-headers.ts, their one source; the
 * assets are served without running the Worker, so its middleware cannot add them). `npm start`
 * and the test stages run this first, so the page a test drives is always the one in the sources.
 * `--watch` is not offered: a rebuild is ~50 ms.
 *
 * It also writes the reference pages: `/docs` (docs.html with Scalar's standalone renderer copied
 * from node_modules to /vendor/, served from this origin, no CDN) and one page per error code at
 * `/errors/<code>` plus their index at `/errors`, written from the error table in src/error-codes.ts,
 * so a problem's `type` always names a page that says what its code means.
 */
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'
import { assetHeadersFile } from '../src/middleware/security-headers.ts'
import { errorPages } from './lib/error-pages.ts'
import { withSiteHeader } from './lib/site-header.ts'

const web = join(dirname(fileURLToPath(import.meta.url)), '..', 'web')
const out = join(web, 'dist')
/** The renderer's self-contained browser build (one file, no chunks it loads later). */
const SCALAR_STANDALONE = join(
  dirname(createRequire(import.meta.url).resolve('@scalar/api-reference')),
  'browser',
  'standalone.js',
)

/**
 * Set by `npm test` once it has built the page, for the stages it starts: stages that run side by
 * side (and the `npm start` stacks they launch) must not delete web/dist under each other's
 * `wrangler dev`, which then answers 500 for every page.
 */
export const WEB_PREBUILT_ENV = 'CUTOUT_WEB_PREBUILT'

export async function buildWeb(): Promise<void> {
  if (process.env[WEB_PREBUILT_ENV] === '1' && existsSync(join(out, 'index.html'))) return
  rmSync(out, { recursive: true, force: true })
  mkdirSync(out, { recursive: true })
  await build({
    entryPoints: {
      index: join(web, 'src', 'index.ts'),
      device: join(web, 'src', 'device.ts'),
      docs: join(web, 'src', 'docs.ts'),
      catalog: join(web, 'src', 'catalog.ts'),
      'try-on': join(web, 'src', 'try-on.ts'),
      editor: join(web, 'src', 'editor', 'main.ts'),
    },
    outdir: out,
    bundle: true,
    format: 'esm',
    target: 'es2022',
    minify: true,
    sourcemap: 'linked',
    logLevel: 'warning',
  })
  for (const file of readdirSync(web)) {
    if (file.endsWith('.html')) {
      // Every page gets the one site header (scripts/lib/site-header.ts) where it marks it.
      const path = file === 'index.html' ? '/' : `/${file.replace(/\.html$/, '')}`
      writeFileSync(join(out, file), withSiteHeader(readFileSync(join(web, file), 'utf8'), path))
    } else if (file.endsWith('.css') || file.endsWith('.svg')) copyFileSync(join(web, file), join(out, file))
  }
  mkdirSync(join(out, 'vendor'))
  copyFileSync(SCALAR_STANDALONE, join(out, 'vendor', 'scalar-api-reference.js'))
  for (const [path, html] of errorPages()) {
    mkdirSync(dirname(join(out, path)), { recursive: true })
    writeFileSync(join(out, path), html)
  }
  // Wrangler reads `_headers` from the assets directory and does not serve it as a file.
  writeFileSync(join(out, '_headers'), assetHeadersFile())
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await buildWeb()
  console.log(`web page built into ${out}`)
}
