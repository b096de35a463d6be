/**
 * The editor as a click tool (issue 44 item 3), in headless Chromium against the e2e stage's
 * shared local stack (the real model), clicked as a person would: with Keep point or Drop point
 * one click on the canvas is one refinement of the revision on show, shown when it lands with its
 * marker drawn; clicks made while one is in flight wait their turn, each on the revision the one
 * before made, with no 409 said; Undo steps back over a click's revision and its marker leaves;
 * a box is one refinement too. The markers are the points of the refinements the revision on show
 * descends from, read back from the canvas's pixels. The project's event stream, closed by the
 * server after its first event, is reopened after that event (the SDK's follower, as every client).
 *
 * SCREENSHOTS_DIR=docs/web writes docs/web/editor-clicks.png.
 */
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import sharp from 'sharp'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { launchChromium } from '../../test/helpers/browser'
import { e2eStack } from '../../test/helpers/e2e-stack'
import { signInByEmail } from '../../test/helpers/local-stack'
import {
  type Api,
  apiAs,
  clickAt,
  drag,
  removal,
  revisionShown,
  shownAt,
  signedInPage,
  tool,
  type Verified,
} from './editor-page'

const SIZE = 512
const SHOTS = process.env.SCREENSHOTS_DIR
/** The markers' fill colours (view.ts): a marker's inside is exactly its colour. */
const KEEP = [30, 123, 52, 255]
const DROP = [179, 38, 30, 255]

interface Revision {
  id: string
  number: number
  baseRevisionId: string | null
  restoreRevisionId: string | null
  refinementId: string | null
}
interface Refinement {
  points?: { x: number; y: number; label: string }[]
  box?: unknown
}
type Point = [number, number]

let browser: Browser
let baseUrl: string
let session: Verified
let api: Api
let jobId: string
const cspViolations: string[] = []

beforeAll(async () => {
  baseUrl = e2eStack().baseUrl
  if (SHOTS) mkdirSync(SHOTS, { recursive: true })
  api = apiAs(baseUrl, () => session)
  ;[browser, session] = await Promise.all([
    launchChromium(),
    signInByEmail(baseUrl, `editor-clicks-${Date.now()}@example.com`) as Promise<Verified>,
  ])
  jobId = await removal(api)
})

afterAll(async () => {
  await browser?.close()
})

afterEach(() => {
  expect(cspViolations.splice(0)).toEqual([])
})

/** The project's revisions, oldest first. */
async function revisionsOf(projectId: string): Promise<Revision[]> {
  const { revisions } = await api<{ revisions: Revision[] }>(`/v1/projects/${projectId}/revisions`)
  return revisions.sort((a, b) => a.number - b.number)
}

/** A revision's mask, one byte a pixel. */
async function maskOf(projectId: string, revisionId: string): Promise<Buffer> {
  const res = await fetch(new URL(`/v1/projects/${projectId}/revisions/${revisionId}/mask`, baseUrl), {
    headers: { authorization: `Bearer ${session.accessToken}` },
  })
  expect(res.status).toBe(200)
  return sharp(Buffer.from(await res.arrayBuffer()))
    .extractChannel(0)
    .raw()
    .toBuffer()
}

/** The first of `candidates` whose mask value, and its 5 px around, passes `test`. */
function pick(mask: Buffer, candidates: Point[], test: (v: number) => boolean): Point {
  const found = candidates.find(([x, y]) => {
    for (let j = -5; j <= 5; j++) for (let i = -5; i <= 5; i++) if (!test(mask[(y + j) * SIZE + x + i])) return false
    return true
  })
  if (!found) throw new Error(`no candidate point fits: ${candidates.join(' ')}`)
  return found
}

/** The marker drawn at photo point `p`, if any: 'keep', 'drop' or null. */
async function markerAt(page: Page, [x, y]: Point): Promise<'keep' | 'drop' | null> {
  // Off the centre, clear of the + / − glyph, inside the disc.
  const px = await shownAt(page, x, y, 3, 3)
  const near = (c: number[]) => c.every((v, i) => Math.abs(v - px[i]) <= 2)
  return near(KEEP) ? 'keep' : near(DROP) ? 'drop' : null
}

/** The id of the one event the cut stream carried. */
const CUT_EVENT_ID = 'cut-after-this'

/**
 * The project's event stream as a server that closes it after one event, the first time only:
 * the editor must reopen it with that event's id as `Last-Event-ID` (the SDK's `followEvents`).
 * The reopening goes on to the real stack without the made-up id, which it would not know.
 * Returns the `Last-Event-ID` of each opening, as they come (null: none).
 */
async function cutProjectStreamOnce(page: Page): Promise<(string | null)[]> {
  const opens: (string | null)[] = []
  await page.route(/\/v1\/projects\/[^/]+\/events$/, async (route) => {
    const headers = route.request().headers()
    opens.push(headers['last-event-id'] ?? null)
    if (opens.length > 1) {
      delete headers['last-event-id']
      return route.fallback({ headers })
    }
    const envelope = { id: CUT_EVENT_ID, type: 'image.project.test.v1', data: {} }
    await route.fulfill({
      status: 200,
      contentType: 'text/event-stream',
      body: `id: ${CUT_EVENT_ID}\nevent: ${envelope.type}\ndata: ${JSON.stringify(envelope)}\n\n`,
    })
  })
  return opens
}

const markers = (page: Page, points: Point[]) => Promise.all(points.map((p) => markerAt(page, p)))
const shownId = (page: Page) => page.getAttribute('#revision', 'data-revision-id')

describe('the editor as a click tool', () => {
  it('makes one refinement per click, shown when it lands with its marker; queues clicks; undoes them; a box is one refinement', async () => {
    const { context, page } = await signedInPage(browser, session, (text) => cspViolations.push(text))
    const errors: string[] = []
    page.on('pageerror', (err) => errors.push(err.message))
    const eventOpens = await cutProjectStreamOnce(page)
    await page.goto(`${baseUrl}/editor?job=${jobId}`)
    await page.locator('#editor[data-ready]').waitFor({ timeout: 120_000 })
    const projectId = new URL(page.url()).searchParams.get('project')!
    await revisionShown(page, 'Step 1 of 1')
    const [first] = await revisionsOf(projectId)
    const base = await maskOf(projectId, first.id)

    // The model kept the helmet beside her (drop it) and left out the shuttle model (keep it).
    const helmet = pick(
      base,
      [
        [390, 440],
        [400, 470],
        [420, 420],
      ],
      (v) => v > 240,
    )
    const visor = pick(
      base,
      [
        [450, 470],
        [440, 490],
        [470, 450],
      ],
      (v) => v > 240,
    )
    const shuttle = pick(
      base,
      [
        [395, 150],
        [392, 180],
        [400, 120],
      ],
      (v) => v < 120,
    )
    const tank = pick(
      base,
      [
        [415, 60],
        [412, 80],
        [418, 40],
      ],
      (v) => v < 120,
    )
    const all = [helmet, shuttle, tank, visor]
    expect(await markers(page, all)).toEqual([null, null, null, null])

    // One click with Drop point: a refinement at once, no other button; shown when it lands.
    await tool(page, 'background')
    const clicked = Date.now()
    await clickAt(page, ...helmet)
    await revisionShown(page, 'Step 2 of 2')
    const firstClickMs = Date.now() - clicked
    let revisions = await revisionsOf(projectId)
    expect(revisions).toHaveLength(2)
    expect(revisions[1]).toMatchObject({ baseRevisionId: first.id, restoreRevisionId: null })
    expect(revisions[1].refinementId).not.toBeNull()
    expect(await shownId(page)).toBe(revisions[1].id)
    const refinement = await api<Refinement>(`/v1/projects/${projectId}/refinements/${revisions[1].refinementId}`)
    expect(refinement.box).toBeUndefined()
    expect(refinement.points).toHaveLength(1)
    expect(refinement.points![0].label).toBe('background')
    expect(Math.abs(refinement.points![0].x * SIZE - helmet[0])).toBeLessThan(2)
    expect(Math.abs(refinement.points![0].y * SIZE - helmet[1])).toBeLessThan(2)
    // The mask changed, and the click's own pixel is dropped; its marker is drawn.
    const dropped = await maskOf(projectId, revisions[1].id)
    expect(dropped.equals(base)).toBe(false)
    expect(dropped[helmet[1] * SIZE + helmet[0]]).toBeLessThan(128)
    expect(await markers(page, all)).toEqual(['drop', null, null, null])
    await page.locator('#refine-marks', { hasText: '0 keep, 1 drop' }).waitFor()

    // A second click, Keep point, on the shuttle: revision 3, both markers.
    await tool(page, 'foreground')
    await clickAt(page, ...shuttle)
    await revisionShown(page, 'Step 3 of 3')
    revisions = await revisionsOf(projectId)
    expect(revisions[2]).toMatchObject({ baseRevisionId: revisions[1].id, restoreRevisionId: null })
    expect((await maskOf(projectId, revisions[2].id))[shuttle[1] * SIZE + shuttle[0]]).toBeGreaterThanOrEqual(128)
    expect(await markers(page, all)).toEqual(['drop', 'keep', null, null])
    await page.locator('#refine-marks', { hasText: '1 keep, 1 drop' }).waitFor()

    // Undo: revision 2 and its marker set again (the keep click's marker leaves).
    await page.click('#undo')
    await revisionShown(page, 'Step 2 of 3')
    expect(await shownId(page)).toBe(revisions[1].id)
    expect(await markers(page, all)).toEqual(['drop', null, null, null])
    await page.locator('#refine-marks', { hasText: '0 keep, 1 drop' }).waitFor()

    // Two clicks at once after Undo: the first starts from revision 2, the second waits for it and
    // builds on what it made. Neither is refused, and the undone click leaves Redo.
    await clickAt(page, ...tank)
    await tool(page, 'background')
    await clickAt(page, ...visor)
    await revisionShown(page, 'Step 4 of 4 · revision 5', 60_000)
    expect(await page.locator('#editor-error').isHidden()).toBe(true)
    revisions = await revisionsOf(projectId)
    expect(revisions).toHaveLength(5)
    expect(revisions[3]).toMatchObject({ baseRevisionId: revisions[2].id, restoreRevisionId: revisions[1].id })
    expect(revisions[4]).toMatchObject({ baseRevisionId: revisions[3].id, restoreRevisionId: null })
    expect(await shownId(page)).toBe(revisions[4].id)
    expect(await page.locator('#redo').isDisabled()).toBe(true)
    expect(await markers(page, all)).toEqual(['drop', null, 'keep', 'drop'])
    await page.locator('#refine-marks', { hasText: '1 keep, 2 drop' }).waitFor()
    await page.check('#ghost')
    if (SHOTS) await page.screenshot({ path: join(SHOTS, 'editor-clicks.png'), fullPage: true })
    await page.uncheck('#ghost')

    // Undo once: the last click's marker leaves, the others stay; Redo brings it back.
    await page.click('#undo')
    await revisionShown(page, 'Step 3 of 4')
    expect(await markers(page, all)).toEqual(['drop', null, 'keep', null])
    await page.click('#redo')
    await revisionShown(page, 'Step 4 of 4')
    expect(await markers(page, all)).toEqual(['drop', null, 'keep', 'drop'])

    // A box drawn around the shuttle is one refinement as well, sent on release.
    await tool(page, 'box')
    await drag(page, [
      [350, 2],
      [470, 290],
    ])
    await revisionShown(page, 'Step 5 of 5 · revision 6', 60_000)
    revisions = await revisionsOf(projectId)
    expect(revisions).toHaveLength(6)
    const boxed = await api<Refinement>(`/v1/projects/${projectId}/refinements/${revisions[5].refinementId}`)
    expect(boxed.box).toBeDefined()
    expect(boxed.points).toBeUndefined()
    // The clicks' markers still show on the boxed revision: it descends from them.
    expect(await markers(page, all)).toEqual(['drop', null, 'keep', 'drop'])

    expect(errors).toEqual([])
    expect(firstClickMs).toBeLessThan(30_000)
    // The stream the server cut after one event was reopened after that event, and only once.
    expect(eventOpens).toEqual([null, CUT_EVENT_ID])
    await context.close()
  })
})
