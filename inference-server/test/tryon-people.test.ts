/**
 * `POST /v1/try-on` finds the person in real photos (test/fixtures/people, licences in its
 * README): sports, street, full and half body, seated, side view, close crops and two people
 * (the largest is dressed), plus `lower_body` and `dress` on real photos, and photos without a
 * person still refused. The person detection is the real BlazePose; the garment's cut-out is not
 * what is tested, so a stub segmenter answers an empty mask and garment.ts keys the made garment
 * off its plain background (as it does after ISNet). One request per photo and category, shared
 * by the assertions about it.
 */
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { TryOnCategory, TryOnLandmarks } from '../../src/contract/tryon.js'
import { TRYON_WARNINGS } from '../../src/contract/tryon.js'
import { imagePart, optionsPart } from '../src/auth.js'
import type { Segmenter } from '../src/segmentation/index.js'
import { createApp } from '../src/server.js'
import { createCpuTryOn } from '../src/tryon/cpu.js'
import type { TryOnModel } from '../src/tryon/model.js'
import { makeDress, makeTrousers, makeTshirt } from './garments.js'
import { fixture, type JobAnswer, postJob, rawPng, STUB_INPUT, type Target } from './helpers.js'

const KEY = 'tryon-people-key'
const PATH = '/v1/try-on'

/** An empty mask: garment.ts then takes every pixel unlike the plain background (the made garments' case). */
const stubSegmenter: Segmenter = {
  version: 'stub@1',
  input: STUB_INPUT,
  segment: async ({ width, height }) => ({ data: new Uint8Array(width * height), width, height }),
  close: async () => {},
}

type Box = [number, number, number, number]
/**
 * Each photo, and where its dressed person's shoulders' midpoint must be ([x0, y0, x1, y1] in the
 * photo's pixels, drawn by hand around that person's shoulders): the garment went on that person.
 */
const PEOPLE: Array<{ file: string; shoulders: Box; fullBody?: true }> = [
  { file: 'arms-raised.jpg', shoulders: [150, 250, 450, 380] },
  { file: 'cameraman.jpg', shoulders: [80, 120, 280, 260] },
  // Two cyclists: the one riding at the camera in the middle, seen whole, is dressed.
  { file: 'cyclists.jpg', shoulders: [80, 90, 240, 220] },
  { file: 'dress-dunes.jpg', shoulders: [150, 230, 250, 320], fullBody: true },
  { file: 'half-body-coat.jpg', shoulders: [130, 370, 300, 500] },
  { file: 'seated-log.jpg', shoulders: [220, 290, 310, 370], fullBody: true },
  { file: 'side-ferry.jpg', shoulders: [60, 250, 200, 370] },
  { file: 'skier.jpg', shoulders: [340, 80, 430, 150], fullBody: true },
  { file: 'standing-field.jpg', shoulders: [150, 330, 280, 430] },
  { file: 'street-snow.jpg', shoulders: [110, 280, 280, 400] },
  // A wide street photo with small people: the man in the red cap, the largest, is dressed (not
  // the man walking on the left, nor the policemen further back).
  { file: 'street-two.jpg', shoulders: [200, 120, 300, 200] },
]

const TILTED = 'standing-field.jpg'
const TILT = 35

const tryOnParts = (person: Uint8Array, garment: Uint8Array, category: TryOnCategory) => [
  optionsPart({ category, seed: 7 }),
  imagePart(person, 'person'),
  imagePart(garment, 'garment'),
]

const landmarksOf = (answer: JobAnswer): TryOnLandmarks =>
  JSON.parse(new TextDecoder().decode(answer.outputs[1].bytes)) as TryOnLandmarks

const midpoint = (l: TryOnLandmarks, a: string, b: string) => ({
  x: (l.points[a].x + l.points[b].x) / 2,
  y: (l.points[a].y + l.points[b].y) / 2,
})

const warningCodes = (answer: JobAnswer) => answer.done?.warnings.map((w) => w.code) ?? []

describe('POST /v1/try-on on real person photos', () => {
  let model: TryOnModel
  let app: Target
  const photos = new Map<string, Buffer>()
  const answers = new Map<string, JobAnswer>()
  const answer = (file: string, category: TryOnCategory = 'upper_body') => {
    const found = answers.get(`${file}:${category}`)
    if (!found) throw new Error(`no answer for ${file} ${category}`)
    return found
  }

  beforeAll(async () => {
    model = createCpuTryOn()
    await model.ready()
    app = createApp({ signingKey: KEY, model: { current: stubSegmenter }, tryOn: model })
    const garments = { upper_body: await makeTshirt(), lower_body: await makeTrousers(), dress: await makeDress() }
    const jobs: Array<[string, TryOnCategory]> = [
      ...PEOPLE.map(({ file }): [string, TryOnCategory] => [file, 'upper_body']),
      ['skier.jpg', 'lower_body'],
      ['seated-log.jpg', 'lower_body'],
      ['dress-dunes.jpg', 'dress'],
      ['skier.jpg', 'dress'],
    ]
    for (const [file, category] of jobs) {
      if (!photos.has(file)) photos.set(file, await fixture(`people/${file}`))
      const person = photos.get(file) as Buffer
      answers.set(
        `${file}:${category}`,
        await postJob(app, KEY, PATH, tryOnParts(person, garments[category], category)),
      )
    }
    // A leaning body: the standing photo turned by TILT degrees (clockwise), grey in the corners.
    const tilted = await sharp(photos.get(TILTED)).rotate(TILT, { background: '#808080' }).jpeg().toBuffer()
    photos.set(`${TILTED}@${TILT}`, tilted)
    const tiltedParts = tryOnParts(tilted, garments.upper_body, 'upper_body')
    answers.set(`${TILTED}@${TILT}:upper_body`, await postJob(app, KEY, PATH, tiltedParts))
  }, 240_000)
  afterAll(async () => {
    await model?.close()
  })

  it.each(PEOPLE)('$file: finds the person and dresses them, the result at the photo size', async ({ file }) => {
    const found = answer(file)
    expect(found.error).toBeUndefined()
    const result = await rawPng(found.outputs[0].bytes)
    const photo = await sharp(photos.get(file)).metadata()
    expect([result.width, result.height]).toEqual([photo.width, photo.height])
    const codes = warningCodes(found)
    expect(codes).toContain(TRYON_WARNINGS.experimental)
    expect(codes.every((c) => c === TRYON_WARNINGS.experimental || c === TRYON_WARNINGS.partialBody)).toBe(true)
  })

  it.each(PEOPLE)('$file: the garment goes on the right person, shoulders above hips', ({ file, shoulders }) => {
    const l = landmarksOf(answer(file))
    const s = midpoint(l, 'leftShoulder', 'rightShoulder')
    const h = midpoint(l, 'leftHip', 'rightHip')
    const [x0, y0, x1, y1] = shoulders
    const where = `${file}: shoulders at ${Math.round(s.x)},${Math.round(s.y)}`
    expect(s.x, where).toBeGreaterThanOrEqual(x0)
    expect(s.x, where).toBeLessThanOrEqual(x1)
    expect(s.y, where).toBeGreaterThanOrEqual(y0)
    expect(s.y, where).toBeLessThanOrEqual(y1)
    expect(h.y).toBeGreaterThan(s.y)
    // The garment's rectangle holds the shoulders' midpoint and is not a sliver.
    const [rx0, ry0, rx1, ry1] = l.region
    expect(s.x).toBeGreaterThanOrEqual(rx0)
    expect(s.x).toBeLessThanOrEqual(rx1)
    expect((rx1 - rx0) * (ry1 - ry0)).toBeGreaterThan(0.01 * l.width * l.height)
  })

  it.each(PEOPLE.filter((p) => p.fullBody))('$file: a whole body is not partial for upper_body', ({ file }) => {
    expect(warningCodes(answer(file))).not.toContain(TRYON_WARNINGS.partialBody)
  })

  it('finds a leaning body: on the photo turned 35°, the landmarks turn with it', async () => {
    const upright = landmarksOf(answer(TILTED))
    const turned = landmarksOf(answer(`${TILTED}@${TILT}`))
    const { width = 0, height = 0 } = await sharp(photos.get(`${TILTED}@${TILT}`)).metadata()
    const [c, s] = [Math.cos((TILT * Math.PI) / 180), Math.sin((TILT * Math.PI) / 180)]
    // Where sharp's rotation (about the centre, onto the larger canvas) puts an upright point.
    const turn = ({ x, y }: { x: number; y: number }) => {
      const [dx, dy] = [x - upright.width / 2, y - upright.height / 2]
      return { x: dx * c - dy * s + width / 2, y: dx * s + dy * c + height / 2 }
    }
    for (const name of ['nose', 'leftShoulder', 'rightShoulder', 'leftHip', 'rightHip']) {
      const expected = turn(upright.points[name])
      const got = turned.points[name]
      // Within 5 % of the photo's height (32 px); MediaPipe's upright box gets ~10 px, an unturned one 38–84 px.
      expect(Math.hypot(got.x - expected.x, got.y - expected.y), name).toBeLessThan(0.05 * upright.height)
    }
  })

  it.each(['skier.jpg', 'seated-log.jpg'])('%s: lower_body puts the trousers from the waist to the feet', (file) => {
    const found = answer(file, 'lower_body')
    expect(found.error).toBeUndefined()
    expect(warningCodes(found)).not.toContain(TRYON_WARNINGS.partialBody)
    const l = landmarksOf(found)
    const [, top, , bottom] = l.region
    expect(top).toBeGreaterThan(midpoint(l, 'leftShoulder', 'rightShoulder').y)
    expect(top).toBeLessThan(midpoint(l, 'leftHip', 'rightHip').y)
    expect(bottom).toBeGreaterThanOrEqual(Math.min(l.height, midpoint(l, 'leftKnee', 'rightKnee').y))
  })

  it.each(['dress-dunes.jpg', 'skier.jpg'])('%s: dress reaches from the shoulders past the knees', (file) => {
    const found = answer(file, 'dress')
    expect(found.error).toBeUndefined()
    expect(warningCodes(found)).not.toContain(TRYON_WARNINGS.partialBody)
    const l = landmarksOf(found)
    const [, top, , bottom] = l.region
    expect(top).toBeLessThan(midpoint(l, 'leftShoulder', 'rightShoulder').y)
    expect(bottom).toBeGreaterThanOrEqual(Math.min(l.height, midpoint(l, 'leftKnee', 'rightKnee').y))
  })

  // coffee.png is the ordinary negative; rocket.jpg the hardest one here (the landmark model sees
  // a body in it; the detector's score, 0.39, keeps it out).
  it.each(['coffee.png', 'rocket.jpg'])(
    '%s: a photo without a person still fails with pose_not_detected',
    async (name) => {
      const refused = await postJob(app, KEY, PATH, tryOnParts(await fixture(name), await makeTshirt(), 'upper_body'))
      expect(refused.status).toBe(200)
      expect(refused.outputs).toEqual([])
      expect(refused.error?.code).toBe('invalid_input')
      expect(refused.error?.message).toMatch(/^person: no person was found in the person image/)
      expect(refused.error?.message).toContain(TRYON_WARNINGS.noPose)
    },
  )
})
