/**
 * The list of images given to the page in one visit: each row says where its image is (waiting,
 * the job's stage, done with its size, or what went wrong) and, once done, offers "Show" (into
 * the before/after view) and its own download. Dropping a folder's worth of product photos is
 * what a seller does; the page runs them one after another (the CLI's `batch` is the tool for
 * hundreds).
 */
import { h } from './dom'

export type ItemState = 'waiting' | 'running' | 'done' | 'failed'

/** One image, from waiting to its result; the object URLs live as long as its row. */
export interface QueueItem {
  file: File
  state: ItemState
  row: HTMLLIElement
  /**
   * `jobId`: the removal, for the editor (signed in only). `confidence`: how sure the mask is,
   * 0..1; `uncertain`: the `low_confidence` warning's message, when a person should look.
   */
  result?: {
    before: string
    after: string
    width: number
    height: number
    jobId?: string
    confidence?: number
    uncertain?: string
  }
}

export interface Queue {
  /** Adds a waiting row for `file`. */
  add(file: File): QueueItem
  /** Updates the row's state and the words that say it. */
  set(item: QueueItem, state: ItemState, text: string): void
  /** Marks the row done with its result, and gives it Show and Download. */
  finish(item: QueueItem, result: NonNullable<QueueItem['result']>): void
  /** The row shown in the before/after view gets `aria-current`. */
  select(item: QueueItem): void
  /** How many rows the list holds. */
  size(): number
}

/** `name.jpg` → `name-cutout.png`: what the download is saved as. */
export const cutoutName = (name: string) => `${name.replace(/\.[^.]+$/, '') || 'image'}-cutout.png`

export function createQueue(
  list: HTMLOListElement,
  clear: HTMLButtonElement,
  onShow: (item: QueueItem) => void,
): Queue {
  let items: QueueItem[] = []
  const ended = (i: QueueItem) => i.state === 'done' || i.state === 'failed'

  const refresh = () => {
    list.hidden = items.length < 2
    // Finished rows can go; a running or waiting one stays until it ends.
    clear.hidden = list.hidden || !items.some(ended)
  }

  clear.addEventListener('click', () => {
    for (const item of items.filter(ended)) {
      if (item.result) for (const url of [item.result.before, item.result.after]) URL.revokeObjectURL(url)
      item.row.remove()
    }
    items = items.filter((i) => !ended(i))
    refresh()
  })

  return {
    add(file) {
      const row = h(
        'li',
        { class: 'waiting' },
        h('span', { class: 'name' }, file.name),
        h('span', { class: 'state' }, 'Waiting'),
      )
      const item: QueueItem = { file, state: 'waiting', row }
      items.push(item)
      list.append(row)
      refresh()
      return item
    },
    set(item, state, text) {
      item.state = state
      item.row.className = state
      const label = item.row.querySelector('.state')
      if (label) label.textContent = text
      refresh()
    },
    finish(item, result) {
      item.result = result
      this.set(item, 'done', `Done · ${result.width} × ${result.height}`)
      const show = h('button', { type: 'button', class: 'link' }, 'Show')
      show.setAttribute('aria-label', `Show ${item.file.name}`)
      show.addEventListener('click', () => onShow(item))
      const download = h('a', { href: result.after, download: cutoutName(item.file.name) }, 'Download')
      item.row.append(show, download)
    },
    size: () => items.length,
    select(item) {
      for (const other of items) other.row.removeAttribute('aria-current')
      item.row.setAttribute('aria-current', 'true')
    },
  }
}
