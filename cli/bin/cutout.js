#!/usr/bin/env node
// The `cutout` command. The bin points here, a file in the sources, rather than at dist/main.js:
// npm links a workspace's bins before the root's `prepare` builds dist/, and skips a bin whose
// file is missing, so `npx --no-install cutout` would find no local command after a clean install
// and ask the registry for someone else's package named `cutout`.
try {
  await import('../dist/main.js')
} catch (err) {
  if (err?.code !== 'ERR_MODULE_NOT_FOUND' || !String(err.message).includes('/dist/')) throw err
  process.stderr.write(
    `cutout: ${err.message}\nThe CLI is not built: run \`npm run build:sdk\` (npm install runs it).\n`,
  )
  process.exitCode = 1
}
