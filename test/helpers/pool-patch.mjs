/**
 * Refuses to run the Worker tests on an unpatched @cloudflare/vitest-pool-workers.
 * patches/@cloudflare+vitest-pool-workers+*.patch (applied by `postinstall: patch-package`) fixes
 * two per-use wrappers that nest (docs/decisions.md, "The Worker stage in one workerd"). Without
 * it the stage still passes alone but each request costs more than the last, and with all files
 * in one workerd the rate-limit tests miss their 5 s windows. `npm ci --ignore-scripts` skips it.
 */
import { readFileSync } from 'node:fs'

const MARK = 'Patched (patches/, docs/decisions.md)'

export function assertPoolPatched() {
  const root = new URL('../../node_modules/@cloudflare/vitest-pool-workers/', import.meta.url)
  for (const file of ['dist/worker/index.mjs', 'dist/worker/lib/cloudflare/test-internal.mjs']) {
    if (!readFileSync(new URL(file, root), 'utf8').includes(MARK)) {
      throw new Error(`@cloudflare/vitest-pool-workers is not patched (${file}): run \`npx patch-package\``)
    }
  }
}
