/**
 * The `low_confidence` warning through the public API (issue 31): a removal of a made photo whose
 * subject fades into the background (the stub segmenter, like any model, can only be unsure of
 * it) succeeds with the warning in `warnings` and a low `result.confidence`; a plain subject with
 * crisp edges gets none, and a high one. The warning says how to fix it (issue 44 item 5): clicks,
 * as refinements with `points` of a project made from the job, or in the editor; MCP's answer for
 * the job says the same in its text.
 */
import { env } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'
import { api, RAW_CUTOUT, seedWorkspace, waitForStatus } from './helpers'
import { readEvents } from './sse'

async function removalOf(kind: 'plain' | 'faded') {
  const { key } = await seedWorkspace()
  const sourceUrl = `${env.FIXTURE_ORIGIN}/generated/subject-${kind}.png`
  // Drawn by the fixture server on first use, which takes longer than a source URL may (1 s).
  await (await fetch(sourceUrl)).arrayBuffer()
  const res = await api('/v1/removals', {
    method: 'POST',
    key,
    json: { sourceUrl, options: RAW_CUTOUT },
    headers: { 'idempotency-key': crypto.randomUUID() },
  })
  expect(res.status, await res.clone().text()).toBe(202)
  const { id } = (await res.json()) as { id: string }
  const job = await waitForStatus(key, id, ['succeeded', 'failed'], 120_000)
  const events = await readEvents(await api(`/v1/jobs/${id}/events`, { key }))
  return { ...job, key, id, completed: events.find((e) => e.event === 'image.job.completed.v1')?.data.data }
}

describe('low_confidence', () => {
  it('warns on a removal whose mask is unsure, and says why', async () => {
    const job = await removalOf('faded')
    expect(job).toMatchObject({ status: 'succeeded' })
    expect(job.warnings).toEqual([{ code: 'low_confidence', message: expect.stringMatching(/^The mask is uncertain/) }])
    // It names the way to fix it: a project from the job, then clicks as refinements with points, or the editor.
    const { message } = job.warnings![0]
    expect(message).toContain('POST /v1/projects with {"jobId"}')
    expect(message).toContain('POST /v1/projects/{id}/refinements')
    expect(message).toMatch(/each click as a refinement with `points`.*every earlier click holds/)
    expect(message).toContain('/editor?job=')
    // MCP's answer for the job says it in its text, before the JSON (which carries the warning too).
    const mcp = await api('/mcp', {
      method: 'POST',
      key: job.key,
      headers: { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
      json: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_job', arguments: { id: job.id } } },
    })
    const { result } = (await mcp.json()) as { result: { content: { type: string; text?: string }[] } }
    expect(result.content[0].text).toContain(`low_confidence: ${message}`)
    // The measure itself is on the job's result (DESIGN.md §3 Result confidence), below the threshold.
    const confidence = job.result?.confidence
    expect(confidence).toBeGreaterThanOrEqual(0)
    expect(confidence).toBeLessThan(0.7)
    // And on the completed event, so a webhook receiver or the page need not read the job again.
    expect(job.completed).toMatchObject({ status: 'succeeded', warnings: job.warnings, confidence })
  }, 180_000)

  it('does not warn on a plain subject with crisp edges, and says it is sure', async () => {
    const job = await removalOf('plain')
    expect(job).toMatchObject({ status: 'succeeded', warnings: [] })
    expect(job.result?.confidence).toBeGreaterThanOrEqual(0.7)
    expect(job.result?.confidence).toBeLessThanOrEqual(1)
    expect(job.completed).toMatchObject({ warnings: [], confidence: job.result?.confidence })
  }, 180_000)
})
