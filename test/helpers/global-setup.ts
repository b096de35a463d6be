/**
 * Node-side world for the Worker tests: the real inference server behind a switchable proxy (and
 * a slower one the proxy's 'slow' mode sends to),
 * the fixture server, and the DNS-over-HTTPS server the SSRF guard resolves names with. Ports
 * come from vitest.worker.config.mts through the environment.
 *
 * The Worker tests are about bookkeeping (credits, jobs, batches, saturation, webhooks,
 * retention, idempotency), not pixels: the inference server runs with its stub segmenter
 * (INFERENCE_SEGMENTER=stub, inference-server/src/segmentation/stub.ts), the same HTTP server and
 * protocol without an ONNX run per job. What the model makes is asserted where pixels are: the
 * inference server's own tests, and the e2e stage's, all with the real model.
 */
import { startDohServer } from './doh-server'
import { startFixtureServer } from './fixture-server'
import { startInferenceProxy } from './inference-proxy'
import {
  outputLines,
  SLOW_STUB_SEGMENTER,
  STUB_SEGMENTER,
  startInferenceServer,
  stopProcess,
} from './inference-process'
import { freePort, TEST_SIGNING_KEYS } from './ports.mjs'

export default async function setup() {
  const proxyPort = Number(process.env.TEST_INFERENCE_PORT)
  const fixturePort = Number(process.env.TEST_FIXTURE_PORT)
  const dohPort = Number(process.env.TEST_DOH_PORT)
  const upstreamPort = await freePort()
  const slowPort = await freePort()
  const [inference, slow] = await Promise.all([
    startInferenceServer(upstreamPort, TEST_SIGNING_KEYS.inference, STUB_SEGMENTER),
    startInferenceServer(slowPort, TEST_SIGNING_KEYS.inference, SLOW_STUB_SEGMENTER),
  ])
  const proxy = await startInferenceProxy(proxyPort, { port: upstreamPort, slowPort })
  const fixtures = await startFixtureServer(fixturePort, proxy, () => outputLines(inference))
  const doh = await startDohServer(dohPort)
  return async () => {
    fixtures.closeAllConnections() // `/never-answers` keeps its requests open
    await new Promise((r) => fixtures.close(r))
    await new Promise((r) => doh.close(r))
    proxy.server.closeAllConnections()
    await new Promise((r) => proxy.server.close(r))
    await Promise.all([stopProcess(inference), stopProcess(slow)])
  }
}
