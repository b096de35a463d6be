/**
 * The SDK's catalog image helper against the real local stack (test/helpers/e2e-stack.ts): a
 * reference sent, the image made while the call waits, with the fields given, its id and seed,
 * read back and listed; a retry under the same key is the first image; a reference that is not an
 * image thrown as the API's problem naming it.
 */
import { Cutout, CutoutProblem } from '@cutout/sdk'
import { readImageFile } from '@cutout/sdk/node'
import sharp from 'sharp'
import { beforeAll, describe, expect, it } from 'vitest'
import { e2eStack } from '../../test/helpers/e2e-stack'

const file = (path: string) => readImageFile(new URL(`../../${path}`, import.meta.url).pathname)

let cutout: Cutout
beforeAll(() => {
  const stack = e2eStack()
  cutout = new Cutout({ baseUrl: stack.baseUrl, apiKey: stack.apiKey })
})

/** The RGB of the image's top-left pixel, as `#RRGGBB`. */
async function corner(bytes: Uint8Array): Promise<string> {
  const { data } = await sharp(bytes).extract({ left: 0, top: 0, width: 1, height: 1 }).raw().toBuffer({
    resolveWithObject: true,
  })
  return `#${[...data.subarray(0, 3)].map((v) => v.toString(16).padStart(2, '0')).join('')}`.toUpperCase()
}

describe('@cutout/sdk catalog images', () => {
  it('makes a catalog image with the fields given, then reads it back and finds it listed', async () => {
    const coffee = await file('inference-server/test/fixtures/coffee.png')
    const options = { width: 512, height: 384, background: '#336699', shadow: 'none', seed: 7 } as const
    const made = await cutout.createCatalogImage([coffee], options)
    expect(made).toMatchObject({ seed: 7, contentType: 'image/png' })
    expect(made.url).toBe(new URL(`/v1/catalog-images/${made.id}`, cutout.baseUrl).href)
    expect(await sharp(made.bytes).metadata()).toMatchObject({ format: 'png', width: 512, height: 384 })
    expect(await corner(made.bytes)).toBe('#336699')

    const again = await cutout.getCatalogImage(made.id)
    expect({ id: again.id, seed: again.seed }).toEqual({ id: made.id, seed: 7 })
    expect(Buffer.from(again.bytes).equals(Buffer.from(made.bytes))).toBe(true)
    const { catalogImages } = await cutout.listCatalogImages({ limit: 100 })
    expect(catalogImages.find((image) => image.id === made.id)).toMatchObject({
      ...options,
      references: 1,
      layout: 'hero',
    })
  })

  it('answers a retry under the same idempotency key with the first image, bytes and all', async () => {
    const coffee = await file('inference-server/test/fixtures/coffee.png')
    const key = crypto.randomUUID()
    const options = { width: 256, height: 256 }
    const first = await cutout.createCatalogImage([coffee], options, { idempotencyKey: key })
    const retried = await cutout.createCatalogImage([coffee], options, { idempotencyKey: key })
    expect({ id: retried.id, seed: retried.seed }).toEqual({ id: first.id, seed: first.seed })
    expect(Buffer.from(retried.bytes).equals(Buffer.from(first.bytes))).toBe(true)
  })

  it('throws the API’s problem naming a reference that is not an image', async () => {
    const coffee = await file('inference-server/test/fixtures/coffee.png')
    const notAnImage = new TextEncoder().encode('not an image, only text'.repeat(4))
    const err = await cutout.createCatalogImage([coffee, notAnImage]).catch((e) => e)
    expect(err).toBeInstanceOf(CutoutProblem)
    expect(err).toMatchObject({ status: 415, code: 'unsupported_media', field: 'references.1' })
  })
})
