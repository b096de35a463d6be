/**
 * The stalled-run reporter (test/helpers/stalled-run.ts): it ends a run only after every file has
 * ended and the run's end did not come, and never turns a failed file into a pass.
 */
import { afterEach, describe, expect, it } from 'vitest'
import type { TestModule, TestSpecification, Vitest } from 'vitest/node'
import StalledRunReporter from './stalled-run'

const specs = (n: number) => Array.from({ length: n }, () => ({}) as TestSpecification)
const module = (ok: boolean) => ({ ok: () => ok }) as unknown as TestModule
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

function reporter() {
  const exits: number[] = []
  const logs: string[] = []
  const r = new StalledRunReporter({
    stallMs: 20,
    exit: () => {
      exits.push(Number(process.exitCode ?? 0))
    },
    log: (m) => logs.push(m),
  })
  r.onInit({} as Vitest)
  return { r, exits, logs }
}

const before = process.exitCode
afterEach(() => {
  process.exitCode = before
})

describe('the stalled-run reporter', () => {
  it('exits once every file has ended and the run has not, with the files’ pass', async () => {
    const { r, exits, logs } = reporter()
    r.onTestRunStart(specs(2))
    r.onTestModuleEnd(module(true))
    await sleep(50)
    expect(exits).toEqual([]) // one file still running: no exit
    r.onTestModuleEnd(module(true))
    await sleep(50)
    expect(exits).toEqual([0])
    expect(logs[0]).toMatch(/all 2 files ended .* passed$/)
  })

  it('exits non-zero when a file failed', async () => {
    const { r, exits } = reporter()
    r.onTestRunStart(specs(2))
    r.onTestModuleEnd(module(true))
    r.onTestModuleEnd(module(false))
    await sleep(50)
    expect(exits).toEqual([1])
  })

  it('does nothing when the run ends', async () => {
    const { r, exits } = reporter()
    r.onTestRunStart(specs(1))
    r.onTestModuleEnd(module(true))
    r.onTestRunEnd()
    await sleep(50)
    expect(exits).toEqual([])
  })
})
