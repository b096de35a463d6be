/**
 * `npm run prepare-model`: reassemble the default model and build its verified size-agnostic graph
 * (size-agnostic.ts) ahead of the first start, which would otherwise do it (a few seconds to a
 * minute on 2 cores).
 */
import { prepareDefaultModel } from './model.js'
import { prepareSizeAgnostic } from './size-agnostic.js'

const path = await prepareDefaultModel()
console.log(`model cached at ${path}`)
const prepared = await prepareSizeAgnostic(path)
const how = {
  cached: 'found verified in the cache',
  checked: 'checked against it at 1024² on the fixture photos and cached',
  recorded: 'the same bytes as a rewrite checked on this runtime before (verified-graphs.ts); cached',
}[prepared.check]
console.log(`size-agnostic graph ${how} at ${prepared.path}`)
if (prepared.check === 'checked')
  console.log(
    `its record, for VERIFIED_GRAPHS in src/segmentation/verified-graphs.ts: ${JSON.stringify(prepared.graph)}`,
  )
