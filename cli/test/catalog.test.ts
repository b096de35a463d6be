/**
 * `cutout catalog` (the built CLI) against the real local stack: two shots made into a `views`
 * photo with the fields given, written beside the front shot as `<front>-catalog.png`, its id and
 * seed in --json; a shot the API cannot decode ends with exit 2 naming it, and a shot that is no
 * image, a missing file or an unknown choice end before anything is sent.
 */
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { e2eStack } from '../../test/helpers/e2e-stack'
import { cli } from './run-cli'

const root = (path: string) => fileURLToPath(new URL(`../../${path}`, import.meta.url))
let work: string
let env: Record<string, string>

beforeAll(() => {
  const stack = e2eStack()
  work = mkdtempSync(join(tmpdir(), 'cutout-catalog-'))
  env = { CUTOUT_API_KEY: stack.apiKey, CUTOUT_BASE_URL: stack.baseUrl, XDG_CONFIG_HOME: work }
  copyFileSync(root('inference-server/test/fixtures/coffee.png'), join(work, 'front.png'))
  copyFileSync(root('inference-server/test/fixtures/chelsea.png'), join(work, 'side.png'))
  copyFileSync(root('inference-server/test/fixtures/chelsea.png'), join(work, 'side-catalog.png'))
  // A PNG by its header, cut off after it: only decoding shows it is broken, on the API's side.
  writeFileSync(join(work, 'truncated.png'), readFileSync(join(work, 'front.png')).subarray(0, 4096))
  writeFileSync(join(work, 'notes.png'), 'not an image, only text\n'.repeat(8))
})
afterAll(() => rmSync(work, { recursive: true, force: true }))

/** The RGB of the image's top-left pixel, as `#RRGGBB`. */
async function corner(path: string): Promise<string> {
  const data = await sharp(path).extract({ left: 0, top: 0, width: 1, height: 1 }).raw().toBuffer()
  return `#${[...data.subarray(0, 3)].map((v) => v.toString(16).padStart(2, '0')).join('')}`.toUpperCase()
}

describe('cutout catalog', () => {
  it('writes <front>-catalog.png with the fields given, its id and seed in --json', async () => {
    const fields = ['--layout', 'views', '--width', '768', '--height', '384', '--background', '#EEEEEE']
    const run = await cli(
      [
        'catalog',
        join(work, 'front.png'),
        join(work, 'side.png'),
        ...fields,
        '--shadow',
        'none',
        '--seed',
        '0',
        '--json',
      ],
      env,
    )
    expect(run.code, run.stderr).toBe(0)
    const result = JSON.parse(run.stdout)
    expect(result).toMatchObject({ out: join(work, 'front-catalog.png'), seed: 0 })
    expect(result.url).toBe(new URL(`/v1/catalog-images/${result.id}`, env.CUTOUT_BASE_URL).href)
    expect(await sharp(result.out).metadata()).toMatchObject({ format: 'png', width: 768, height: 384 })
    expect(await corner(result.out)).toBe('#EEEEEE')
  })

  it('ends with exit 2 naming a shot the API cannot decode', async () => {
    const run = await cli(['catalog', join(work, 'front.png'), join(work, 'truncated.png'), '--width', '256'], env)
    expect(run.code, run.stderr).toBe(2)
    expect(run.stderr).toMatch(/^cutout: invalid_input \(references\.1\): /)
  })

  it('refuses a shot that is no image, a missing file, an output over a shot and an unknown choice before sending anything', async () => {
    const notImage = await cli(['catalog', join(work, 'notes.png')], env)
    expect(notImage.code).toBe(2)
    expect(notImage.stderr).toMatch(/^cutout: unsupported_media \(references\.0\): /)
    const missing = await cli(['catalog', join(work, 'front.png'), join(work, 'back.png')], env)
    expect(missing.code).toBe(2)
    expect(missing.stderr).toBe(`cutout: cannot read ${join(work, 'back.png')}: no such file\n`)
    const overwrite = await cli(['catalog', join(work, 'side.png'), join(work, 'side-catalog.png')], env)
    expect(overwrite.code).toBe(2)
    expect(overwrite.stderr).toMatch(/would overwrite the input .*side-catalog\.png\. Nothing was sent/)
    const usage = await cli(['catalog', join(work, 'front.png'), '--shadow', 'dramatic'], env)
    expect(usage.code).toBe(1)
    expect(usage.stderr).toMatch(/--shadow/)
  })
})
