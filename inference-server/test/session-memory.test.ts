/**
 * How a session holds its runs' memory (`INFERENCE_MEMORY_ARENA`, session-memory.ts): resident by
 * default (the arena on, no memory pattern), released with `0` (no arena, a pattern per input
 * size). Why, with the measurements: session-memory.ts and docs/decisions.md "A session keeps its runs' memory, and glibc gives it back".
 */
import { afterAll, describe, expect, it } from 'vitest'
import { planSession } from '../src/segmentation/model.js'
import { glibcVersion, MALLOC_ENV, mallocWarning, sessionMemoryFromEnv } from '../src/segmentation/session-memory.js'
import { ISNET_GENERAL_USE, removeTinyGraphs, writeTinyGraph } from './tiny-graphs.js'

afterAll(removeTinyGraphs)

describe('session memory', () => {
  it('stays resident unless INFERENCE_MEMORY_ARENA is 0', () => {
    expect(sessionMemoryFromEnv({})).toBe('resident')
    expect(sessionMemoryFromEnv({ INFERENCE_MEMORY_ARENA: '1' })).toBe('resident')
    expect(sessionMemoryFromEnv({ INFERENCE_MEMORY_ARENA: '0' })).toBe('released')
  })

  it('opens a session with the arena and no pattern by default, and the other way round when released', async () => {
    const modelPath = await writeTinyGraph(ISNET_GENERAL_USE)
    const profile = 'isnet-general-use'
    expect((await planSession({ modelPath, profile })).options).toMatchObject({
      enableCpuMemArena: true,
      enableMemPattern: false,
    })
    expect((await planSession({ modelPath, profile, memory: 'released' })).options).toMatchObject({
      enableCpuMemArena: false,
      enableMemPattern: true,
    })
  })
})

describe("glibc's malloc setting (MALLOC_ENV)", () => {
  it('is warned of on glibc when the server was started without it, and not otherwise', () => {
    expect(mallocWarning({}, '2.36')).toMatch(/^MALLOC_MMAP_THRESHOLD_ is not set: set MALLOC_MMAP_THRESHOLD_=131072 /)
    expect(mallocWarning({ ...MALLOC_ENV }, '2.36')).toBeUndefined()
    // A host's own malloc setting is its choice.
    expect(mallocWarning({ MALLOC_ARENA_MAX: '2' }, '2.36')).toBeUndefined()
    // musl (Alpine), macOS and Windows have no such setting.
    expect(mallocWarning({}, undefined)).toBeUndefined()
  })

  it.runIf(process.platform === 'linux')("finds a Linux host's glibc", () => {
    expect(glibcVersion()).toMatch(/^2\.\d+$/)
  })
})
