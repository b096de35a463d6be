/**
 * A brush stroke while it is drawn: its points in source pixels, and a live preview of what it
 * does to the mask, computed as the inference server rasterises it (inference-server/src/editing/
 * strokes.ts: strength = opacity·falloff(distance / radius) from the polyline, the nearest segment
 * deciding). The preview only shows the stroke; the revision the API makes from it on release is
 * what the editor shows next, so any rounding difference lasts until then.
 */
import { falloff } from '../../../src/contract/brush'
import type { Stroke, StrokeTool } from '../../../src/contract/editing'
import { MAX_STROKE_POINTS } from '../../../src/contract/limits'

export interface BrushSettings {
  tool: StrokeTool
  /** Diameter in source pixels. */
  size: number
  /** 0–1: the part of the radius painted at full strength. */
  hardness: number
  /** 0–1. */
  opacity: number
}

export class LiveStroke {
  readonly points: [number, number][] = []
  /** The stroke's strength per source pixel (0–255), the max over its segments. */
  readonly strength: Uint8Array
  readonly radius: number

  constructor(
    readonly brush: BrushSettings,
    readonly width: number,
    readonly height: number,
  ) {
    this.strength = new Uint8Array(width * height)
    this.radius = Math.max(0.5, brush.size / 2)
  }

  /** Adds a point (source pixels) and paints the segment to it; the box it changed, for redrawing. */
  add(x: number, y: number): { x0: number; y0: number; x1: number; y1: number } | null {
    const last = this.points.at(-1)
    // Sub-pixel moves add nothing the mask can show, only points to send.
    if (last && Math.hypot(x - last[0], y - last[1]) < 1) return null
    this.points.push([x, y])
    return this.#paint(last ?? [x, y], [x, y])
  }

  #paint([ax, ay]: [number, number], [bx, by]: [number, number]) {
    const { radius: r, width, height } = this
    const { hardness, opacity } = this.brush
    const x0 = Math.max(0, Math.floor(Math.min(ax, bx) - r))
    const x1 = Math.min(width - 1, Math.ceil(Math.max(ax, bx) + r))
    const y0 = Math.max(0, Math.floor(Math.min(ay, by) - r))
    const y1 = Math.min(height - 1, Math.ceil(Math.max(ay, by) + r))
    const dx = bx - ax
    const dy = by - ay
    const len2 = dx * dx + dy * dy
    for (let j = y0; j <= y1; j++) {
      for (let i = x0; i <= x1; i++) {
        const px = i + 0.5 - ax
        const py = j + 0.5 - ay
        const t = len2 === 0 ? 0 : Math.max(0, Math.min(1, (px * dx + py * dy) / len2))
        const d = Math.hypot(px - t * dx, py - t * dy)
        if (d >= r) continue
        const s = Math.round(255 * opacity * falloff(d / r, hardness))
        const k = j * width + i
        if (s > this.strength[k]) this.strength[k] = s
      }
    }
    return { x0, y0, x1, y1 }
  }

  /** The mask value a pixel shows under the stroke so far. */
  apply(mask: number, k: number): number {
    const s = this.strength[k]
    if (s === 0) return mask
    return this.brush.tool === 'restore' ? mask + ((255 - mask) * s) / 255 : (mask * (255 - s)) / 255
  }

  /**
   * The stroke as the API takes it (SPEC.md §4): points as fractions of the source's width and
   * height, size as a fraction of its longer side. Over the API's point limit, every other point.
   */
  toStroke(): Stroke {
    let points = this.points
    while (points.length > MAX_STROKE_POINTS) points = points.filter((_, i) => i % 2 === 0)
    const unit = (v: number) => Math.min(1, Math.max(0, v))
    return {
      tool: this.brush.tool,
      points: points.map(([x, y]) => [unit(x / this.width), unit(y / this.height)]),
      size: Math.min(1, this.brush.size / Math.max(this.width, this.height)),
      hardness: this.brush.hardness,
      opacity: this.brush.opacity,
    }
  }
}
