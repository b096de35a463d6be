/**
 * How work that ended without succeeding is told (one rule, sdk/src/problem.ts `endedProblem`, for
 * the SDK's jobs and the page's refinements): the work's own error code and message when it has
 * one, else `canceled` (409) or `processing_failed` (500), codes the API itself uses; never a
 * code only a client knows, and never worth retrying as it is.
 */
import { CutoutProblem, type Job, JobFailedError } from '@cutout/sdk'
import { expect, it } from 'vitest'

const job = (status: Job['status'], error: Job['error'] = null) => ({ id: 'j1', status, error }) as unknown as Job

it('a failed job with an error is a problem with its code and message', () => {
  const err = new JobFailedError(job('failed', { code: 'image_too_large', message: 'Expected at most 50 MP' }))
  expect(err).toBeInstanceOf(CutoutProblem)
  expect(err).toMatchObject({
    status: 500,
    code: 'image_too_large',
    detail: 'Expected at most 50 MP',
    retryable: false,
  })
})

it('a job that ended without an error is `canceled` (409) or `processing_failed` (500), named in the detail', () => {
  expect(new JobFailedError(job('canceled'))).toMatchObject({
    status: 409,
    code: 'canceled',
    detail: 'job j1 ended canceled',
  })
  expect(new JobFailedError(job('failed'))).toMatchObject({
    status: 500,
    code: 'processing_failed',
    detail: 'job j1 ended failed',
    retryable: false,
  })
})
