/**
 * The editor's click tool (DESIGN.md §3 "Refinement clicks"): a Keep or Drop click, or a box, on
 * the canvas is one refinement (`POST …/refinements`), which the server decides from the refined
 * revision's mask and every point of the refinements that revision descends from. This module
 * sends one, follows it to its end (its completion event on the project's stream, and a read now
 * and then in case the stream dropped) and hands back the revision it made; main.ts queues them
 * with the strokes, so each builds on the revision before it. It also knows each refinement's
 * points, for the markers of the clicks a revision descends from.
 */
import { REFINEMENTS_PER_PROJECT } from '../../../src/contract/limits'
import { isTerminalStatus } from '../../../sdk/src/wait'
import { endedProblem } from '../../../sdk/src/problem'
import { CutoutProblem } from '../api'
import { byId } from '../dom'
import {
  type EditBase,
  getRefinement,
  getRevision,
  type ProjectEvent,
  type Refinement,
  type RefinementRequest,
  type Revision,
  refine,
} from './project'
import type { Box, Marker } from './view'

/** A click or a box, in photo pixels, on its way to becoming a refinement. */
export type ClickEdit = { point: Marker; box?: undefined } | { box: Box; point?: undefined }

type Ended = Pick<Refinement, 'status' | 'error' | 'revisionId'>

/** How often a running refinement is read, beside its completion event on the project's stream. */
const POLL_MS = 2000
/** How many ended refinements not (yet) waited for are remembered. */
const MAX_ENDED = 50

export interface ClickDeps {
  projectId: () => string
  /** The photo's size, to send points and boxes as fractions of it. */
  size: () => { width: number; height: number }
  /** Says how the refinement under way is doing. */
  say: (text: string) => void
}

export class ClickTool {
  /** Each refinement's points by its id, in photo pixels (a refinement's points never change). */
  readonly #points = new Map<string, Marker[]>()
  /** Refinements this page sent and is waiting for, by id. */
  readonly #waiting = new Map<string, (ended: Ended) => void>()
  /**
   * The last refinements the stream said had ended, by id: a click can end before the answer to
   * its POST is read, and its event must not be missed for that.
   */
  readonly #ended = new Map<string, Ended>()
  /** How many of its refinements the project has spent (failed ones are given back). */
  #used = 0

  constructor(private readonly deps: ClickDeps) {}

  set used(count: number) {
    this.#used = count
    byId('refine-left').textContent =
      `${Math.max(0, REFINEMENTS_PER_PROJECT - count)} of ${REFINEMENTS_PER_PROJECT} refinements left in this project.`
  }

  /** Says how the refinement under way is doing (or, with '', nothing). */
  say(text: string): void {
    this.deps.say(text)
  }

  /** The request for `edit`: coordinates as fractions of the photo (SPEC.md §2), within 0–1. */
  #request(edit: ClickEdit): RefinementRequest {
    const { width, height } = this.deps.size()
    const unit = (v: number) => Math.min(1, Math.max(0, v))
    if (edit.point) {
      const { x, y, label } = edit.point
      return { points: [{ x: unit(x / width), y: unit(y / height), label }] }
    }
    const { x0, y0, x1, y1 } = edit.box
    const x = unit(Math.min(x0, x1) / width)
    const y = unit(Math.min(y0, y1) / height)
    return {
      box: { x, y, width: unit(Math.max(x0, x1) / width) - x, height: unit(Math.max(y0, y1) / height) - y },
    }
  }

  /**
   * Sends `edit` as a refinement on `on` and resolves with the revision it made once it has
   * ended. A refinement whose base was overtaken fails as the 409 a stroke would get.
   */
  async run(edit: ClickEdit, on: EditBase): Promise<Revision> {
    const projectId = this.deps.projectId()
    const made = await refine(projectId, on, this.#request(edit))
    this.#remember(made)
    this.used = this.#used + 1
    this.say(edit.point ? 'Refining from your click…' : 'Refining inside the box…')
    const ended = await new Promise<Ended>((resolve) => {
      const early = this.#ended.get(made.id)
      if (early) return resolve(early)
      this.#waiting.set(made.id, resolve)
      // The stream says when it ends; reading it now and then covers a stream that dropped.
      const poll = async () => {
        if (!this.#waiting.has(made.id)) return
        try {
          const now = await getRefinement(projectId, made.id)
          if (isTerminalStatus(now.status)) return this.#settle(made.id, now)
          if (now.status === 'queued') this.say('Queued: it runs when the workspace has a free slot.')
        } catch {
          // the next read or the stream will tell
        }
        setTimeout(poll, POLL_MS)
      }
      setTimeout(poll, POLL_MS)
    })
    if (ended.status === 'succeeded' && ended.revisionId) return getRevision(projectId, ended.revisionId)
    this.used = this.#used - 1
    // The SDK's problem for work that did not succeed: main.ts tells a conflict by its code.
    const { status, body } = endedProblem(ended, 'The refinement')
    throw new CutoutProblem(status, body)
  }

  /** Hands a project event over: a refinement this page waits for may have ended. */
  onProjectEvent(event: ProjectEvent): void {
    const { id, status, error, revisionId } = event.data
    if (event.type !== 'image.refinement.completed.v1' || !id || !status) return
    const ended = { status: status as Refinement['status'], error: error ?? null, revisionId: revisionId ?? null }
    if (this.#waiting.has(id)) {
      this.#settle(id, ended)
      return
    }
    this.#ended.set(id, ended)
    for (const old of this.#ended.keys()) if (this.#ended.size > MAX_ENDED) this.#ended.delete(old)
  }

  #settle(id: string, ended: Ended): void {
    const resolve = this.#waiting.get(id)
    this.#waiting.delete(id)
    resolve?.(ended)
  }

  #remember(refinement: Refinement): void {
    const { width, height } = this.deps.size()
    this.#points.set(
      refinement.id,
      (refinement.points ?? []).map((p) => ({ x: p.x * width, y: p.y * height, label: p.label })),
    )
  }

  /**
   * The clicks `lineage` (a revision and those it was made from) holds: the points of the
   * refinements that made its revisions, oldest first. Refinements made elsewhere are read once.
   */
  async clicksOf(lineage: Revision[]): Promise<Marker[]> {
    const ids = lineage.flatMap((r) => (r.refinementId ? [r.refinementId] : []))
    const unknown = ids.filter((id) => !this.#points.has(id))
    const projectId = this.deps.projectId()
    // One that cannot be read now (a dropped connection) is left unmarked until the next show.
    const read = await Promise.all(unknown.map((id) => getRefinement(projectId, id).catch(() => null)))
    for (const refinement of read) if (refinement) this.#remember(refinement)
    return ids.flatMap((id) => this.#points.get(id) ?? [])
  }
}
