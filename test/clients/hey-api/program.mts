/**
 * A user's program on a client that @hey-api/openapi-ts generated from /openapi.json, written as
 * its README says one is used: no casts, no `any` (test/clients/hey-api.test.ts checks both, then
 * typechecks this file and the generated code with TypeScript 5.9, strict, and runs it against the
 * e2e stack). It removes the background of one photo twice: the upload flow with JSON bodies, and
 * one multipart request; then it makes a catalog image from the photo (a multipart body with a
 * repeated file part and numbers). `./json` is generated from the document as served; `./form` from the same
 * document with POST /v1/removals' multipart body chosen (hey-api types one body per operation).
 * Reads CUTOUT_BASE_URL, CUTOUT_API_KEY, CUTOUT_PHOTO and CUTOUT_OUT; writes the two results
 * there and prints what it did as JSON.
 */
import { randomUUID } from 'node:crypto'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { client as formClient } from './form/client.gen'
import { createRemoval as createRemovalForm } from './form/sdk.gen'
import { client } from './json/client.gen'
import {
  completeUpload,
  createCatalogImage,
  createRemoval,
  createUpload,
  getJob,
  getJobResult,
  putUploadContent,
} from './json/sdk.gen'
import type { Job } from './json/types.gen'

const baseUrl = required('CUTOUT_BASE_URL')
const auth = required('CUTOUT_API_KEY')
const photo = await readFile(required('CUTOUT_PHOTO'))
const out = required('CUTOUT_OUT')
/** A model run on a busy two-core machine, the first one loading the model. */
const JOB_DEADLINE_MS = 400_000

client.setConfig({ baseUrl, auth })
formClient.setConfig({ baseUrl, auth })

function required(name: string): string {
  const value = process.env[name]
  if (!value) throw new Error(`${name} is not set`)
  return value
}

/** Polls the job until it ends. */
async function finished(job: Job): Promise<Job> {
  const deadline = Date.now() + JOB_DEADLINE_MS
  let current = job
  while (current.status === 'queued' || current.status === 'processing') {
    if (Date.now() > deadline) throw new Error(`job ${current.id} still ${current.status}`)
    await new Promise((resolve) => setTimeout(resolve, 1000))
    const { data } = await getJob({ path: { id: current.id }, throwOnError: true })
    current = data
  }
  return current
}

/** The job's result image, written to `name` under CUTOUT_OUT. */
async function saveResult(job: Job, name: string): Promise<string> {
  const { data } = await getJobResult({ path: { id: job.id }, parseAs: 'blob', throwOnError: true })
  const path = join(out, name)
  await writeFile(path, new Uint8Array(await data.arrayBuffer()))
  return path
}

/** The upload flow: reserve, PUT the bytes, complete; then a JSON removal naming the upload. */
async function removeByUpload(): Promise<{ job: Job; path: string }> {
  const { data: upload } = await createUpload({ body: { contentType: 'image/png' }, throwOnError: true })
  await putUploadContent({
    path: { id: upload.id },
    body: new Blob([photo], { type: 'image/png' }),
    headers: { 'Content-Type': 'image/png' },
    throwOnError: true,
  })
  await completeUpload({ path: { id: upload.id }, throwOnError: true })
  const { data } = await createRemoval({
    // Only the quality: the rest of the options are the documented defaults.
    body: { uploadId: upload.id, options: { quality: 'fast' } },
    headers: { 'idempotency-key': randomUUID(), prefer: 'wait=8' },
    throwOnError: true,
  })
  const job = await finished(data)
  return { job, path: await saveResult(job, 'json.png') }
}

/** One multipart request: the photo as the `image` part, the options as a JSON part. */
async function removeByForm(): Promise<{ job: Job; path: string }> {
  const { data } = await createRemovalForm({
    body: {
      image: new File([photo], 'astronaut.png', { type: 'image/png' }),
      options: { quality: 'fast', output: 'cutout' },
    },
    headers: { 'idempotency-key': randomUUID(), prefer: 'wait=8' },
    throwOnError: true,
  })
  const job = await finished(data)
  return { job, path: await saveResult(job, 'form.png') }
}

/** A catalog image of the photo at 512×512, with its seed. */
async function makeCatalogImage(): Promise<{ path: string; seed: string | null }> {
  const { data, response } = await createCatalogImage({
    body: { references: [new File([photo], 'front.png', { type: 'image/png' })], width: 512, height: 512, seed: 7 },
    parseAs: 'blob',
    throwOnError: true,
  })
  const path = join(out, 'catalog.png')
  await writeFile(path, new Uint8Array(await data.arrayBuffer()))
  return { path, seed: response.headers.get('x-generation-seed') }
}

const json = await removeByUpload()
const form = await removeByForm()
const catalog = await makeCatalogImage()
const summary = (r: { job: Job; path: string }) => ({ status: r.job.status, kind: r.job.kind, path: r.path })
console.log(JSON.stringify({ json: summary(json), form: summary(form), catalog }))
