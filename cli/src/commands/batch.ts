/**
 * @module
 * `cutout batch DIR`: the folder's images whose output does not exist yet are uploaded, queued as
 * one batch per 100 (POST /v1/batches: atomic, fair-scheduled), and written as each job ends.
 * Resumable: a second run skips every file already done, and an interrupted one leaves no
 * half-written output (writes go through a temporary name).
 */
import { join } from 'node:path'
import type { Batch, Cutout, Job } from '@cutout/sdk'
import { JobFailedError } from '@cutout/sdk'
import { readImageFile } from '@cutout/sdk/node'
import { authedClient, Output } from '../context.js'
import { describe, exitCodeFor } from '../exit.js'
import { exists, listImages, outputName, pool } from '../files.js'
import { createProgress, type Progress } from '../progress.js'
import { type FileOutcome, type RemoveOptions, worstExit, writeAtomically } from './remove.js'

/** The API's limit of uploads per batch. */
const BATCH_SIZE = 100
/** How often the batch is read while it runs (well inside the 120 requests/min limit). */
const POLL_MS = 1500

interface Item {
  file: string
  out: string
  uploadId?: string
  jobId?: string
}

async function uploadAll(cutout: Cutout, items: Item[], concurrency: number, failed: (i: Item, e: unknown) => void) {
  await pool(items, concurrency, async (item) => {
    try {
      item.uploadId = (await cutout.upload(await readImageFile(item.file))).id
    } catch (err) {
      failed(item, err)
    }
  })
}

/** Polls the batches until each is complete, handing every job to `onEnded` once. */
async function follow(cutout: Cutout, batches: Batch[], onEnded: (job: Job) => Promise<void>) {
  const seen = new Set<string>()
  let pending = batches.map((b) => b.id)
  while (pending.length) {
    await new Promise((r) => setTimeout(r, POLL_MS))
    const next: string[] = []
    for (const id of pending) {
      const batch = await cutout.getBatch(id)
      for (const job of batch.jobs) {
        if (seen.has(job.id) || !['succeeded', 'failed', 'canceled'].includes(job.status)) continue
        seen.add(job.id)
        await onEnded(job)
      }
      if (batch.status !== 'complete') next.push(id)
    }
    pending = next
  }
}

export async function batch(dir: string, options: RemoveOptions): Promise<number> {
  const out = new Output(!!options.json)
  const outDir = options.out ?? join(dir, 'cutouts')
  const files = await listImages(dir)
  const items: Item[] = files.map((file) => ({ file, out: join(outDir, outputName(file, options.output)) }))
  const outcomes: FileOutcome[] = []
  const todo: Item[] = []
  for (const item of items) {
    if (await exists(item.out)) outcomes.push({ file: item.file, status: 'skipped', out: item.out })
    else todo.push(item)
  }
  if (todo.length) await run(todo, options, out, outcomes, files.length)
  const count = (s: FileOutcome['status']) => outcomes.filter((o) => o.status === s).length
  out.result(
    { dir, out: outDir, files: outcomes },
    `${count('done')} done, ${count('skipped')} skipped (already done), ${count('failed')} failed`,
  )
  return worstExit(outcomes)
}

async function run(todo: Item[], options: RemoveOptions, out: Output, outcomes: FileOutcome[], total: number) {
  const cutout = await authedClient(options, (line) => out.info(line))
  const progress: Progress = createProgress(total, total - todo.length)
  const fail = (item: Item, err: unknown) => {
    outcomes.push({ file: item.file, status: 'failed', error: describe(err), exitCode: exitCodeFor(err) })
    progress.tick(`${item.file}: failed: ${describe(err)}`)
  }
  try {
    await uploadAll(cutout, todo, options.concurrency, fail)
    const ready = todo.filter((i) => i.uploadId)
    const batches: Batch[] = []
    for (let start = 0; start < ready.length; start += BATCH_SIZE) {
      const chunk = ready.slice(start, start + BATCH_SIZE)
      const created = await cutout.createBatch(
        chunk.map((i) => i.uploadId!),
        { quality: options.quality, output: options.output },
      )
      // The API keeps the jobs in the order of uploadIds.
      created.jobs.forEach((job, index) => {
        chunk[index].jobId = job.id
      })
      batches.push(created)
    }
    const byJob = new Map(ready.map((i) => [i.jobId, i]))
    await follow(cutout, batches, async (job) => {
      const item = byJob.get(job.id)
      if (!item) return
      try {
        if (job.status !== 'succeeded') throw new JobFailedError(job)
        await writeAtomically(item.out, (await cutout.downloadResult(job)).bytes)
        outcomes.push({ file: item.file, status: 'done', out: item.out, jobId: job.id })
        progress.tick(`${item.file} → ${item.out}`)
      } catch (err) {
        fail(item, err)
      }
    })
  } finally {
    progress.stop()
  }
}
