/**
 * How a session holds its runs' memory (`INFERENCE_MEMORY_ARENA`, session-memory.ts): resident by
 * default (the arena on, no memory pattern), released with `0` (no arena, a pattern per input
 * size). Why, with the measurements: session-memory.ts and docs/decisions.md (session 15).
 */
import { afterAll, describe, expect, it } from 'vitest'
import { planSession } from '../src/segmentation/model.js'
import { sessionMemoryFromEnv } from '../src/segmentation/session-memory.js'
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
