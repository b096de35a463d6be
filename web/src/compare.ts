/**
 * The before/after view: the original underneath, the result over a checkerboard on top, clipped
 * to the share of the width the range input gives (so arrow keys move it as well as a pointer).
 */
import { byId } from './dom'

export function setUpCompare(): { show(before: string, after: string): void } {
  const compare = byId('compare')
  const slider = byId<HTMLInputElement>('slider')
  const reveal = () => compare.style.setProperty('--reveal', `${slider.value}%`)
  slider.addEventListener('input', reveal)
  reveal()
  return {
    show(before, after) {
      byId<HTMLImageElement>('before').src = before
      byId<HTMLImageElement>('after').src = after
    },
  }
}
