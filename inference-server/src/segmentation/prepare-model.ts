/**
 * `npm run prepare-model`: reassemble the default model and build its verified size-agnostic graph
 * (size-agnostic.ts) ahead of the first start, which would otherwise do it (a few seconds to a
 * minute on 2 cores).
 */
import { prepareDefaultModel } from './model.js'
import { prepareSizeAgnosticModel } from './size-agnostic.js'

const path = await prepareDefaultModel()
console.log(`model cached at ${path}`)
const anySize = await prepareSizeAgnosticModel(path)
console.log(`size-agnostic graph verified against it at 1024² and cached at ${anySize}`)
