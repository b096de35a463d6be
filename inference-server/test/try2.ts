import sharp from 'sharp'
import { createSegmenter } from '../src/segmentation/index.js'
import { decodeImage } from '../src/imaging/decode.js'
import { garmentMask, garmentPoints } from '../src/tryon/garment.js'
import { placeGarment } from '../src/tryon/body.js'
import { createPoseEstimator } from '../src/tryon/pose.js'
import { fixture } from './helpers.js'
import { makeTshirt } from './garments.js'
const seg = await createSegmenter()
const shirt = (await decodeImage(await makeTshirt())).image
const mask = garmentMask(shirt, await seg.segment(shirt))
await sharp(mask.data, { raw: { width: mask.width, height: mask.height, channels: 1 } }).png().toFile('/tmp/shirtmask.png')
const g = garmentPoints(mask)
console.log(JSON.stringify(g))
const poses = createPoseEstimator()
const person = (await decodeImage(await fixture('astronaut.png'))).image
const pose = await poses.estimate(person)
await sharp(pose.mask.data, { raw: { width: pose.mask.width, height: pose.mask.height, channels: 1 } }).png().toFile('/tmp/personmask.png')
const pl = placeGarment(pose, g, 'upper_body', person)
console.log(JSON.stringify(pl.body.map(p=>[Math.round(p.x),Math.round(p.y)])), JSON.stringify(pl.garment.map(p=>[Math.round(p.x),Math.round(p.y)])))
await poses.close(); await seg.close()
