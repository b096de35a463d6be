/**
 * Keeps the pool's module-runner patch to one layer when files share a workerd (`isolate: false`).
 *
 * @cloudflare/vitest-pool-workers (0.15.1 up to 1.0.0, src/worker/index.ts `onModuleRunner`)
 * wraps the runner's `transport.invoke` so that every module fetch runs in its runner Durable
 * Object. Vitest (4.1.12, `runBaseTests`) reuses one module runner per worker but announces it
 * again before every file, so without this guard the 40th file's every import went through 40
 * nested Durable Object calls (device.test.ts 1.5 s → 64 s). Pinning the first wrap keeps the
 * patch's purpose (dynamic `import()` from a handler) and drops the repeats.
 */
type Transport = { invoke?: (...args: unknown[]) => unknown }
type Mocker = { moduleRunner?: { transport?: Transport } }

export function keepOneRunnerWrap(): void {
  const transport = (globalThis as { __vitest_mocker__?: Mocker }).__vitest_mocker__?.moduleRunner?.transport
  if (!transport) throw new Error('no module runner transport: the pool or Vitest changed, review this guard')
  if (Object.getOwnPropertyDescriptor(transport, 'invoke')?.get) return // pinned by an earlier file
  const first = transport.invoke
  Object.defineProperty(transport, 'invoke', {
    configurable: true,
    get: () => first,
    set: () => {}, // the pool's wrap for the next file: already in place once
  })
}
