/** Waiting, in an end-to-end test, for a job to reach a stage on the real stack. */

/**
 * Resolves once the job's event stream (`GET /v1/jobs/{id}/events` through `api`, which adds the
 * credential) reports `stage`: the model is then running on the server.
 */
export async function reachedStage(
  api: (path: string) => Promise<Response>,
  jobId: string,
  stage: string,
): Promise<void> {
  const res = await api(`/v1/jobs/${jobId}/events`)
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader()
  let text = ''
  while (!text.includes(`"stage":"${stage}"`)) {
    const { value, done } = await reader.read()
    if (done) throw new Error(`the job ended without reaching ${stage}:\n${text}`)
    text += value
  }
  await reader.cancel()
}
