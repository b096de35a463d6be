/**
 * Headless Chromium for the page's tests: Debian's `chromium-headless-shell` package (`.ci/run`
 * installs it when missing), else its `chromium`, driven by playwright-core, which ships no browser
 * of its own. The headless shell is the same Chromium without the browser's UI layers, as
 * Playwright itself runs headless tests: the five web test files took half the CPU with it (46
 * against 90 CPU-s, 97 against 122 s, one run after the other; docs/decisions.md). The flags keep it
 * from reaching out to Google's services, which this machine's closed network refuses (STACK.md).
 *
 * The e2e stage starts one Chromium for all its files (test/helpers/e2e-stack.ts,
 * `startChromiumServer`) and each web test file connects to it: a launch costs seconds of CPU on a
 * 2-core box, and every test makes its own browser context, so files share nothing but the process.
 */
import { existsSync } from 'node:fs'
import { type Browser, type BrowserServer, chromium, type Download, type LaunchOptions } from 'playwright-core'
import { inject } from 'vitest'

declare module 'vitest' {
  export interface ProvidedContext {
    /** The shared Chromium's WebSocket endpoint, when the stage started one. */
    chromiumEndpoint?: string
  }
}

const CANDIDATES = [
  process.env.CHROMIUM_PATH,
  '/usr/bin/chromium-headless-shell',
  '/usr/bin/chromium',
  '/usr/bin/chromium-browser',
]

export function chromiumPath(): string {
  const found = CANDIDATES.find((p): p is string => Boolean(p) && existsSync(p as string))
  if (!found)
    throw new Error(
      'No Chromium: install Debian’s chromium-headless-shell or chromium package (apt-get install …) or set CHROMIUM_PATH',
    )
  return found
}

const launchOptions = (): LaunchOptions => ({
  executablePath: chromiumPath(),
  headless: true,
  args: [
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ],
})

/** Starts a Chromium that test files connect to (`launchChromium`); the caller closes it. */
export function startChromiumServer(): Promise<BrowserServer> {
  return chromium.launchServer(launchOptions())
}

/**
 * The stage's shared Chromium when it started one, else a Chromium of the file's own. Either way
 * `close()` ends only what this file made: on a shared one it closes the file's contexts and
 * disconnects.
 */
export function launchChromium(): Promise<Browser> {
  const endpoint = inject('chromiumEndpoint')
  return endpoint ? chromium.connect(endpoint) : chromium.launch(launchOptions())
}

/** A finished download's bytes (`download.path()` is not there on a shared, connected Chromium). */
export async function downloadedBytes(download: Download): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const chunk of await download.createReadStream()) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}
