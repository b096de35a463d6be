// `npm start` runs this first, in plain JavaScript so any Node can run it: on a Node older than
// the project needs it prints one line saying so and exits 1, instead of a stack trace from deep
// inside wrangler (which needs Node 22.12). The tested runtime is Node 24 LTS (README, Quick start).
const [major, minor] = process.versions.node.split('.').map(Number)
if (major < 22 || (major === 22 && minor < 12)) {
  process.stderr.write(
    `cutout-api needs Node 22.12 or newer (Node 24 LTS is the tested one); this is Node ${process.version}. See README.md, "Quick start".\n`,
  )
  process.exit(1)
}
