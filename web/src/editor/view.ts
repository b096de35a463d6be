/**
 * The editor's canvas: the photo's cutout over a checkerboard or a colour, zoomed and panned.
 * Only the visible part of the photo is drawn, at the screen's resolution: the canvas is the size
 * of its box on screen (times the device pixel ratio), never the photo's, so a 12 MP photo costs
 * a screen's worth of pixels per frame. The mask is applied per screen pixel from the mask's bytes
 * (and the stroke being drawn), then the photo's region is clipped by it on a region-sized canvas.
 */
import type { Mask } from './codecs'

export type Backdrop = { type: 'checkerboard' } | { type: 'color'; color: string }

/** A click (photo pixels): keep or drop; `pending` while its refinement is on its way. */
export interface Marker {
  x: number
  y: number
  label: 'foreground' | 'background'
  pending?: boolean
}

/** A box, from corner to corner (photo pixels). */
export interface Box {
  x0: number
  y0: number
  x1: number
  y1: number
}

/** What sits over the photo: the clicks the revision on show comes from, and boxes on their way. */
export interface Marks {
  points: Marker[]
  boxes: Box[]
}

/** The mask value a pixel shows: the revision's, or with the stroke being drawn applied. */
export type MaskValue = (mask: number, index: number) => number

const MIN_SCALE = 1 / 64
const MAX_SCALE = 32
const CHECKER = 10
/** A click marker's radius and its + / − glyph's half length, in CSS pixels. */
const MARKER_RADIUS = 7
const GLYPH = 3.5

export class EditorView {
  photo: ImageBitmap | null = null
  mask: Mask | null = null
  live: MaskValue | null = null
  backdrop: Backdrop = { type: 'checkerboard' }
  /** Show what the mask removes, faintly, so a person can see what to restore. */
  ghost = false
  marks: Marks = { points: [], boxes: [] }
  /** The box being dragged out with the Box tool, or null. */
  dragBox: Box | null = null
  /** The brush's outline under the pointer (photo pixels), or null. */
  cursor: { x: number; y: number; r: number } | null = null
  /** Told after each draw (the zoom level shown beside the buttons). */
  onDraw: () => void = () => undefined
  /** Screen pixels per photo pixel, and the photo point at the canvas's top left. */
  scale = 1
  ox = 0
  oy = 0
  #frame = 0
  readonly #ctx: CanvasRenderingContext2D
  readonly #region = document.createElement('canvas')
  readonly #alpha = document.createElement('canvas')
  #checker: CanvasPattern | null = null

  constructor(readonly canvas: HTMLCanvasElement) {
    this.#ctx = canvas.getContext('2d')!
    new ResizeObserver(() => this.#resize()).observe(canvas)
    this.#resize()
  }

  get dpr(): number {
    return window.devicePixelRatio || 1
  }

  #resize(): void {
    const box = this.canvas.getBoundingClientRect()
    const width = Math.max(1, Math.round(box.width * this.dpr))
    const height = Math.max(1, Math.round(box.height * this.dpr))
    if (width === this.canvas.width && height === this.canvas.height) return
    const fitted = this.scale === this.fitScale()
    this.canvas.width = width
    this.canvas.height = height
    if (fitted || !this.photo) this.fit()
    else this.draw()
  }

  fitScale(): number {
    if (!this.photo) return 1
    return Math.min(this.canvas.width / this.photo.width, this.canvas.height / this.photo.height)
  }

  /** The whole photo, centred. */
  fit(): void {
    if (this.photo) {
      this.scale = this.fitScale()
      this.ox = (this.photo.width - this.canvas.width / this.scale) / 2
      this.oy = (this.photo.height - this.canvas.height / this.scale) / 2
    }
    this.draw()
  }

  /** Zooms by `factor` keeping the photo point under canvas point (cx, cy) in place. */
  zoom(factor: number, cx = this.canvas.width / 2, cy = this.canvas.height / 2): void {
    const next = Math.min(MAX_SCALE, Math.max(MIN_SCALE, this.scale * factor))
    const [px, py] = this.toPhoto(cx, cy)
    this.scale = next
    this.ox = px - cx / next
    this.oy = py - cy / next
    this.draw()
  }

  /** Moves the view by canvas pixels. */
  pan(dx: number, dy: number): void {
    this.ox -= dx / this.scale
    this.oy -= dy / this.scale
    this.draw()
  }

  /** Canvas pixels (not CSS pixels) to photo pixels. */
  toPhoto(cx: number, cy: number): [number, number] {
    return [this.ox + cx / this.scale, this.oy + cy / this.scale]
  }

  /** A pointer event's position in photo pixels. */
  eventToPhoto(event: { clientX: number; clientY: number }): [number, number] {
    const box = this.canvas.getBoundingClientRect()
    return this.toPhoto((event.clientX - box.left) * this.dpr, (event.clientY - box.top) * this.dpr)
  }

  /** Redraws on the next frame (many pointer moves, one draw). */
  draw(): void {
    if (this.#frame) return
    this.#frame = requestAnimationFrame(() => {
      this.#frame = 0
      this.#render()
    })
  }

  #render(): void {
    const ctx = this.#ctx
    const { width: cw, height: ch } = this.canvas
    ctx.setTransform(1, 0, 0, 1, 0, 0)
    ctx.fillStyle = '#e8eaee'
    ctx.fillRect(0, 0, cw, ch)
    this.canvas.dataset.view = `${this.scale} ${this.ox} ${this.oy}`
    this.onDraw()
    const { photo, mask } = this
    if (!photo || !mask) return
    // The visible part of the photo, in photo pixels, and where it lands on the canvas.
    const sx0 = Math.max(0, Math.floor(this.ox))
    const sy0 = Math.max(0, Math.floor(this.oy))
    const sx1 = Math.min(photo.width, Math.ceil(this.ox + cw / this.scale))
    const sy1 = Math.min(photo.height, Math.ceil(this.oy + ch / this.scale))
    if (sx1 <= sx0 || sy1 <= sy0) return
    const dx = Math.round((sx0 - this.ox) * this.scale)
    const dy = Math.round((sy0 - this.oy) * this.scale)
    const dw = Math.max(1, Math.round((sx1 - this.ox) * this.scale) - dx)
    const dh = Math.max(1, Math.round((sy1 - this.oy) * this.scale) - dy)

    this.#fillBackdrop(dx, dy, dw, dh)
    if (this.ghost) {
      ctx.globalAlpha = 0.25
      ctx.drawImage(photo, sx0, sy0, sx1 - sx0, sy1 - sy0, dx, dy, dw, dh)
      ctx.globalAlpha = 1
    }
    this.#drawCutout(sx0, sy0, sx1 - sx0, sy1 - sy0, dw, dh)
    ctx.drawImage(this.#region, 0, 0, dw, dh, dx, dy, dw, dh)
    this.#drawMarks()
  }

  #fillBackdrop(x: number, y: number, w: number, h: number): void {
    const ctx = this.#ctx
    if (this.backdrop.type === 'color') {
      ctx.fillStyle = this.backdrop.color
    } else {
      this.#checker ??= this.#makeChecker()
      ctx.fillStyle = this.#checker ?? '#fff'
    }
    ctx.fillRect(x, y, w, h)
  }

  #makeChecker(): CanvasPattern | null {
    const tile = document.createElement('canvas')
    tile.width = tile.height = CHECKER * 2
    const t = tile.getContext('2d')!
    t.fillStyle = '#fff'
    t.fillRect(0, 0, CHECKER * 2, CHECKER * 2)
    t.fillStyle = '#ccc'
    t.fillRect(0, 0, CHECKER, CHECKER)
    t.fillRect(CHECKER, CHECKER, CHECKER, CHECKER)
    return this.#ctx.createPattern(tile, 'repeat')
  }

  /** The photo's region scaled to (dw, dh), kept where the mask keeps it. */
  #drawCutout(sx: number, sy: number, sw: number, sh: number, dw: number, dh: number): void {
    const { photo, mask, live } = this
    if (!photo || !mask) return
    for (const c of [this.#region, this.#alpha]) {
      if (c.width < dw || c.height < dh) {
        c.width = Math.max(c.width, dw)
        c.height = Math.max(c.height, dh)
      }
    }
    const alpha = this.#alpha.getContext('2d')!
    const pixels = alpha.createImageData(dw, dh)
    const out = pixels.data
    const { data, width } = mask
    // Each screen pixel takes the mask at the photo pixel under its centre.
    const xs = new Int32Array(dw)
    for (let i = 0; i < dw; i++) xs[i] = Math.min(sx + sw - 1, sx + Math.floor(((i + 0.5) * sw) / dw))
    for (let j = 0; j < dh; j++) {
      const row = Math.min(sy + sh - 1, sy + Math.floor(((j + 0.5) * sh) / dh)) * width
      let o = j * dw * 4 + 3
      for (let i = 0; i < dw; i++, o += 4) {
        const k = row + xs[i]
        out[o] = live ? live(data[k], k) : data[k]
      }
    }
    alpha.putImageData(pixels, 0, 0)
    const region = this.#region.getContext('2d')!
    region.globalCompositeOperation = 'copy'
    region.imageSmoothingQuality = 'high'
    region.drawImage(photo, sx, sy, sw, sh, 0, 0, dw, dh)
    region.globalCompositeOperation = 'destination-in'
    region.drawImage(this.#alpha, 0, 0, dw, dh, 0, 0, dw, dh)
    region.globalCompositeOperation = 'source-over'
  }

  #drawMarks(): void {
    const ctx = this.#ctx
    const toCanvas = (x: number, y: number): [number, number] => [
      (x - this.ox) * this.scale,
      (y - this.oy) * this.scale,
    ]
    const { boxes, points } = this.marks
    ctx.lineWidth = 2 * this.dpr
    if (this.cursor) {
      const [x, y] = toCanvas(this.cursor.x, this.cursor.y)
      ctx.beginPath()
      ctx.arc(x, y, Math.max(2, this.cursor.r * this.scale), 0, Math.PI * 2)
      ctx.strokeStyle = 'rgba(0, 0, 0, 0.7)'
      ctx.lineWidth = 1.5 * this.dpr
      ctx.stroke()
      ctx.strokeStyle = 'rgba(255, 255, 255, 0.9)'
      ctx.lineWidth = 0.75 * this.dpr
      ctx.stroke()
      ctx.lineWidth = 2 * this.dpr
    }
    ctx.setLineDash([6 * this.dpr, 4 * this.dpr])
    ctx.strokeStyle = '#3050d8'
    for (const box of this.dragBox ? [...boxes, this.dragBox] : boxes) {
      const [x0, y0] = toCanvas(Math.min(box.x0, box.x1), Math.min(box.y0, box.y1))
      const [x1, y1] = toCanvas(Math.max(box.x0, box.x1), Math.max(box.y0, box.y1))
      ctx.strokeRect(x0, y0, x1 - x0, y1 - y0)
    }
    ctx.setLineDash([])
    for (const p of points) this.#drawMarker(...toCanvas(p.x, p.y), p)
  }

  /**
   * A click's marker: a green disc with + (keep) or a red one with − (drop), ringed in white so
   * it shows on any photo; faint while its refinement is on its way. The disc's inside is exactly
   * its colour (the tests read it back).
   */
  #drawMarker(x: number, y: number, { label, pending }: Marker): void {
    const ctx = this.#ctx
    const d = this.dpr
    ctx.globalAlpha = pending ? 0.5 : 1
    ctx.beginPath()
    ctx.arc(x, y, MARKER_RADIUS * d, 0, Math.PI * 2)
    ctx.fillStyle = label === 'foreground' ? '#1e7b34' : '#b3261e'
    ctx.fill()
    ctx.strokeStyle = '#fff'
    ctx.lineWidth = 1.5 * d
    ctx.stroke()
    ctx.fillStyle = '#fff'
    ctx.fillRect(x - GLYPH * d, y - d, 2 * GLYPH * d, 2 * d)
    if (label === 'foreground') ctx.fillRect(x - d, y - GLYPH * d, 2 * d, 2 * GLYPH * d)
    ctx.globalAlpha = 1
  }
}
