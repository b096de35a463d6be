/**
 * The canvas's gestures, by tool: with Restore or Erase a drag is a stroke, drawn live and handed
 * over on release; with Keep point or Drop point a click is one click; with Box a drag is a box,
 * handed over on release; with the Hand a drag pans. The wheel and the keys zoom and pan. What a
 * gesture makes goes to main.ts's handlers, which turn it into an edit.
 */
import { type BrushSettings, LiveStroke } from './brush'
import type { Box, EditorView, Marker } from './view'

export type Tool = 'restore' | 'erase' | 'foreground' | 'background' | 'box' | 'pan'
/** A box smaller than this on screen (CSS pixels, both sides) was a click, not a box. */
const MIN_BOX = 4

export interface Gestures {
  brush(tool: 'restore' | 'erase'): BrushSettings
  /** A stroke has begun: it is drawn live from now on. */
  strokeStarted(stroke: LiveStroke): void
  strokeEnded(stroke: LiveStroke): void
  clicked(point: Marker): void
  boxed(box: Box): void
  /** Any gesture is over (the page's last message may go now). */
  ended(): void
}

export function currentTool(): Tool {
  return (document.querySelector<HTMLInputElement>('input[name="tool"]:checked')?.value ?? 'restore') as Tool
}

export function setUpPointer(view: EditorView, on: Gestures): void {
  const canvas = view.canvas
  let drag: { tool: Tool; x: number; y: number; at: [number, number]; stroke?: LiveStroke } | null = null
  canvas.addEventListener('pointerdown', (event) => {
    if (!view.photo || event.button !== 0) return
    const tool = currentTool()
    const at = view.eventToPhoto(event)
    canvas.setPointerCapture(event.pointerId)
    drag = { tool, x: event.clientX, y: event.clientY, at }
    if (tool === 'restore' || tool === 'erase') {
      drag.stroke = new LiveStroke(on.brush(tool), view.photo.width, view.photo.height)
      on.strokeStarted(drag.stroke)
      drag.stroke.add(...at)
    } else if (tool === 'box') {
      view.dragBox = { x0: at[0], y0: at[1], x1: at[0], y1: at[1] }
    }
    view.draw()
  })
  canvas.addEventListener('pointermove', (event) => {
    const [x, y] = view.eventToPhoto(event)
    const tool = currentTool()
    view.cursor = tool === 'restore' || tool === 'erase' ? { x, y, r: on.brush(tool).size / 2 } : null
    if (!drag) return view.draw()
    if (drag.stroke) {
      if (drag.stroke.add(x, y)) view.draw()
    } else if (drag.tool === 'box' && view.dragBox) {
      view.dragBox.x1 = x
      view.dragBox.y1 = y
      view.draw()
    } else if (drag.tool === 'pan') {
      view.pan((event.clientX - drag.x) * view.dpr, (event.clientY - drag.y) * view.dpr)
      drag.x = event.clientX
      drag.y = event.clientY
    }
  })
  const end = (event: PointerEvent) => {
    if (!drag) return
    const { tool, stroke, at } = drag
    drag = null
    on.ended()
    if (stroke) on.strokeEnded(stroke)
    // A click is where the button went down: a hand's jitter before release moves nothing.
    if ((tool === 'foreground' || tool === 'background') && event.type === 'pointerup')
      on.clicked({ x: at[0], y: at[1], label: tool })
    const box = view.dragBox
    view.dragBox = null
    const small = (a: number, b: number) => (Math.abs(b - a) * view.scale) / view.dpr < MIN_BOX
    if (box && event.type === 'pointerup' && !(small(box.x0, box.x1) && small(box.y0, box.y1))) on.boxed(box)
    view.draw()
  }
  canvas.addEventListener('pointerup', end)
  canvas.addEventListener('pointercancel', end)
  canvas.addEventListener('pointerleave', () => {
    view.cursor = null
    view.draw()
  })
  canvas.addEventListener(
    'wheel',
    (event) => {
      event.preventDefault()
      const box = canvas.getBoundingClientRect()
      const factor = Math.exp(-event.deltaY / 500)
      view.zoom(factor, (event.clientX - box.left) * view.dpr, (event.clientY - box.top) * view.dpr)
    },
    { passive: false },
  )
  canvas.addEventListener('keydown', (event) => {
    const step = 60 * view.dpr
    const moves: Record<string, [number, number]> = {
      ArrowLeft: [step, 0],
      ArrowRight: [-step, 0],
      ArrowUp: [0, step],
      ArrowDown: [0, -step],
    }
    if (moves[event.key]) view.pan(...moves[event.key])
    else if (event.key === '+' || event.key === '=') view.zoom(1.25)
    else if (event.key === '-') view.zoom(0.8)
    else if (event.key === '0') view.fit()
    else return
    event.preventDefault()
  })
}
