/**
 * `cutout try-on` (the built CLI) against the real local stack: a dress put on a person photo,
 * written beside it as `<person>-try-on.png` with the job's notices in --json; a photo with no
 * person in it ends with the job's problem and a non-zero exit; a missing category is a usage error.
 */
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TRYON_WARNINGS } from '../../src/contract/tryon-warnings'
import { e2eStack } from '../../test/helpers/e2e-stack'
import { cli } from './run-cli'

const root = (path: string) => fileURLToPath(new URL(`../../${path}`, import.meta.url))
let work: string
let env: Record<string, string>

beforeAll(() => {
  const stack = e2eStack()
  work = mkdtempSync(join(tmpdir(), 'cutout-try-on-'))
  env = { CUTOUT_API_KEY: stack.apiKey, CUTOUT_BASE_URL: stack.baseUrl, XDG_CONFIG_HOME: work }
  copyFileSync(root('inference-server/test/fixtures/people/standing-field.jpg'), join(work, 'standing.jpg'))
  copyFileSync(root('docs/try-on/garment-dress.jpg'), join(work, 'dress.jpg'))
  copyFileSync(root('inference-server/test/fixtures/coffee.png'), join(work, 'coffee.png'))
})
afterAll(() => rmSync(work, { recursive: true, force: true }))

describe('cutout try-on', () => {
  it('writes <person>-try-on.png beside the person photo, with the notices in --json (seed 0 is a seed)', async () => {
    const run = await cli(
      ['try-on', join(work, 'standing.jpg'), join(work, 'dress.jpg'), '--category', 'dress', '--seed', '0', '--json'],
      env,
    )
    expect(run.code, run.stderr).toBe(0)
    const result = JSON.parse(run.stdout)
    expect(result.out).toBe(join(work, 'standing-try-on.png'))
    expect(result.warnings.map((w: { code: string }) => w.code)).toEqual([
      TRYON_WARNINGS.experimental,
      TRYON_WARNINGS.partialBody,
    ])
    expect(await sharp(readFileSync(result.out)).metadata()).toMatchObject({ format: 'png', width: 427, height: 640 })
  })

  it('ends non-zero with the job’s problem for a photo with no person in it; a missing category is exit 1', async () => {
    const failed = await cli(['try-on', join(work, 'coffee.png'), join(work, 'dress.jpg'), '--category', 'dress'], env)
    expect(failed.code).not.toBe(0)
    expect(failed.stderr).toMatch(/^cutout: /)
    const usage = await cli(['try-on', join(work, 'standing.jpg'), join(work, 'dress.jpg')], env)
    expect(usage.code).toBe(1)
    expect(usage.stderr).toMatch(/--category/)
  })
})
