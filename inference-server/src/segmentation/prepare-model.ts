/** `npm run prepare-model`: reassemble and cache the default model ahead of the first start. */
import { prepareDefaultModel } from './model.js'

const path = await prepareDefaultModel()
console.log(`model cached at ${path}`)
