import { describe, expect, it } from 'vitest'
import { Limiter } from '../src/limiter.js'

const deferred = () => {
  let resolve!: () => void
  const promise = new Promise<void>((r) => (resolve = r))
  return { promise, resolve }
}

describe('Limiter', () => {
  it('runs at most `concurrency` tasks and queues up to `queueLimit`, then refuses with 503', async () => {
    const limiter = new Limiter({ concurrency: 1, queueLimit: 1 })
    const gate = deferred()
    const order: number[] = []
    const first = limiter.run(async () => {
      await gate.promise
      order.push(1)
    })
    const second = limiter.run(async () => {
      order.push(2)
    })
    expect(limiter.stats).toMatchObject({ running: 1, queued: 1, concurrency: 1 })
    await expect(limiter.run(async () => 3)).rejects.toMatchObject({
      code: 'processor_unavailable',
      status: 503,
      retryable: true,
      retryAfter: 1,
    })
    gate.resolve()
    await Promise.all([first, second])
    expect(order).toEqual([1, 2])
    expect(limiter.stats).toMatchObject({ running: 0, queued: 0 })
  })

  it('frees the slot when a task throws', async () => {
    const limiter = new Limiter({ concurrency: 1, queueLimit: 0 })
    await expect(
      limiter.run(async () => {
        throw new Error('boom')
      }),
    ).rejects.toThrow('boom')
    expect(await limiter.run(async () => 'ok')).toBe('ok')
  })
})

describe('Limiter.saturated', () => {
  it('is true exactly when the next request would be refused', async () => {
    const limiter = new Limiter({ concurrency: 2, queueLimit: 1 })
    const gate = deferred()
    const tasks: Promise<unknown>[] = []
    const states: boolean[] = [limiter.saturated]
    for (let i = 0; i < 3; i++) {
      tasks.push(limiter.run(() => gate.promise))
      states.push(limiter.saturated)
    }
    // 1 running, 2 running, 2 running + 1 queued (full)
    expect(states).toEqual([false, false, false, true])
    await expect(limiter.run(async () => 0)).rejects.toMatchObject({ status: 503 })
    gate.resolve()
    await Promise.all(tasks)
    expect(limiter.saturated).toBe(false)
  })
})

describe('Limiter and a caller that goes away', () => {
  it('takes a waiting request out of the queue when its signal aborts, and never runs it', async () => {
    const limiter = new Limiter({ concurrency: 1, queueLimit: 2 })
    const gate = deferred()
    const first = limiter.run(() => gate.promise)
    const caller = new AbortController()
    let ran = false
    const second = limiter.run(async () => {
      ran = true
    }, caller.signal)
    expect(limiter.stats).toMatchObject({ running: 1, queued: 1 })
    caller.abort()
    await expect(second).rejects.toMatchObject({ code: 'processor_unavailable' })
    expect(limiter.stats).toMatchObject({ running: 1, queued: 0, dropped: 1 })
    gate.resolve()
    await first
    expect(ran).toBe(false)
    expect(limiter.stats).toMatchObject({ running: 0, queued: 0, dropped: 1, stopped: 0 })
  })

  it('refuses a caller already gone, and counts work released as stopped', async () => {
    const limiter = new Limiter({ concurrency: 1, queueLimit: 1 })
    await expect(limiter.admit(AbortSignal.abort())).rejects.toMatchObject({ code: 'processor_unavailable' })
    const release = await limiter.admit()
    release('stopped')
    release('stopped') // once only
    expect(limiter.stats).toMatchObject({ running: 0, queued: 0, dropped: 1, stopped: 1 })
  })
})
