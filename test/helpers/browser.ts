/**
 * Headless Chromium for the page's tests: Debian's `chromium` package (`.ci/run` installs it when
 * missing) driven by playwright-core, which ships no browser of its own. The flags keep it from
 * reaching out to Google's services, which this machine's closed network refuses (STACK.md).
 */
import { existsSync } from 'node:fs'
import { type Browser, chromium } from 'playwright-core'

const CANDIDATES = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser']

export function chromiumPath(): string {
  const found = CANDIDATES.find((p): p is string => Boolean(p) && existsSync(p as string))
  if (!found)
    throw new Error('No Chromium: install Debian’s chromium package (apt-get install chromium) or set CHROMIUM_PATH')
  return found
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
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
}
