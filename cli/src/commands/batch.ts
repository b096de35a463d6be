/**
 * @module
 * `cutout batch DIR`: the folder's images whose output does not exist yet are uploaded, queued as
 * one batch per 100 (POST /v1/batches: atomic, fair-scheduled), and written as each job ends; one
 * batch is finished before the next is uploaded. Resumable: a second run skips every file already
 * done, and an interrupted one leaves no half-written output (writes go through a temporary name).
 */
import { join } from 'node:path'
import type { Batch, Cutout, Job } from '@cutout/sdk'
import { isTerminalStatus, JobFailedError } from '@cutout/sdk'
import { authedClient, Output } from '../context.js'
import { describe, EXIT, exitCodeFor } from '../exit.js'
import { checkOutputs, exists, listImages, outputName, pool } from '../files.js'
import { createProgress, type Progress } from '../progress.js'
import { type FileOutcome, type RemoveOptions, uploadFile, worstExit, writeAtomically } from './remove.js'

/** The API's limit of uploads per batch. */
const BATCH_SIZE = 100
/** How often the batch is read while it runs (well inside the 120 requests/min limit). */
const POLL_MS = 1500

interface Item {
  file: string
  out: string
  uploadId?: string
}

/**
 * Uploads each item; one that fails is reported and the rest go on, except after a refusal of the
 * credential (401, 403), which every later upload would meet too: then no further upload starts,
 * and that refusal is thrown once the ones in flight have ended.
 */
async function uploadAll(cutout: Cutout, items: Item[], concurrency: number, failed: (i: Item, e: unknown) => void) {
  let refused: unknown
  await pool(items, concurrency, async (item) => {
    if (refused) return
    try {
      item.uploadId = (await uploadFile(cutout, item.file)).id
    } catch (err) {
      failed(item, err)
      if (exitCodeFor(err) === EXIT.auth) refused ??= err
    }
  })
  if (refused) throw refused
}

/** Polls the batch until it is complete, handing every job to `onEnded` once. */
async function follow(cutout: Cutout, batch: Batch, onEnded: (job: Job) => Promise<void>) {
  const seen = new Set<string>()
  for (;;) {
    await new Promise((r) => setTimeout(r, POLL_MS))
    const current = await cutout.getBatch(batch.id)
    for (const job of current.jobs) {
      if (seen.has(job.id) || !isTerminalStatus(job.status)) continue
      seen.add(job.id)
      await onEnded(job)
    }
    if (current.status === 'complete') return
  }
}

export async function batch(dir: string, options: RemoveOptions): Promise<number> {
  const out = new Output(!!options.json)
  const outDir = options.out ?? join(dir, 'cutouts')
  const files = await listImages(dir)
  const items: Item[] = files.map((file) => ({ file, out: join(outDir, outputName(file, options.output)) }))
  checkOutputs(items)
  const outcomes: FileOutcome[] = []
  const todo: Item[] = []
  for (const item of items) {
    if (await exists(item.out)) outcomes.push({ file: item.file, status: 'skipped', out: item.out })
    else todo.push(item)
  }
  if (todo.length) await run(todo, options, out, outcomes, files.length)
  const count = (s: FileOutcome['status']) => outcomes.filter((o) => o.status === s).length
  const notStarted = count('not-started')
  out.result(
    { dir, out: outDir, files: outcomes },
    `${count('done')} done, ${count('skipped')} skipped (already done), ${count('failed')} failed` +
      (notStarted ? `, ${notStarted} not started (run again to resume)` : ''),
  )
  return worstExit(outcomes)
}

/**
 * One batch of at most 100 at a time: upload, create, follow, download, then the next. So a run
 * that stops (no credits, the API unreachable) has written every result it paid for, and a second
 * run resumes where it stopped. Files never started are reported as such.
 */
async function run(todo: Item[], options: RemoveOptions, out: Output, outcomes: FileOutcome[], total: number) {
  const cutout = await authedClient(options, (line) => out.info(line))
  const progress: Progress = createProgress(total, total - todo.length)
  const ended = new Set<Item>()
  const fail = (item: Item, err: unknown) => {
    ended.add(item)
    outcomes.push({ file: item.file, status: 'failed', error: describe(err), exitCode: exitCodeFor(err) })
    progress.tick(`${item.file}: failed: ${describe(err)}`)
  }
  try {
    for (let start = 0; start < todo.length; start += BATCH_SIZE) {
      const chunk = todo.slice(start, start + BATCH_SIZE)
      try {
        await runChunk(cutout, chunk, options, progress, outcomes, ended, fail)
      } catch (err) {
        // The batch could not be created or followed: its unfinished files failed with the reason,
        // and the rest are left for the next run.
        for (const item of chunk) if (!ended.has(item)) fail(item, err)
        for (const item of todo.slice(start + BATCH_SIZE)) {
          outcomes.push({ file: item.file, status: 'not-started' })
        }
        return
      }
    }
  } finally {
    progress.stop()
  }
}

async function runChunk(
  cutout: Cutout,
  chunk: Item[],
  options: RemoveOptions,
  progress: Progress,
  outcomes: FileOutcome[],
  ended: Set<Item>,
  fail: (item: Item, err: unknown) => void,
) {
  await uploadAll(cutout, chunk, options.concurrency, fail)
  const ready = chunk.filter((i) => i.uploadId)
  if (!ready.length) return
  const created = await cutout.createBatch(
    ready.map((i) => i.uploadId!),
    { quality: options.quality, output: options.output },
  )
  // The API keeps the jobs in the order of uploadIds.
  const byJob = new Map(created.jobs.map((job, index) => [job.id, ready[index]]))
  await follow(cutout, created, async (job) => {
    const item = byJob.get(job.id)
    if (!item) return
    try {
      if (job.status !== 'succeeded') throw new JobFailedError(job)
      await writeAtomically(item.out, (await cutout.downloadResult(job)).bytes)
      ended.add(item)
      outcomes.push({ file: item.file, status: 'done', out: item.out, jobId: job.id })
      progress.tick(`${item.file} → ${item.out}`)
    } catch (err) {
      fail(item, err)
    }
  })
}
