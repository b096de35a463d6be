/**
 * A page-wide notice while a request waits out the request rate limit (the SDK's retry rules send
 * it again after a short `Retry-After`; api.ts passes each wait on): without it, a button would stay busy for the whole wait with no reason
 * given. It counts down what `Retry-After` said, never "this minute": the limit's window is
 * configurable (RATE_LIMIT_WINDOW_SECONDS). Shared by the main page and /device.
 */
import { onRateWait } from './api'
import { h } from './dom'

/** Adds the notice at the top of `<main>` and keeps it counting down while any request waits. */
export function setUpRateWaitNotice(): void {
  const notice = h('p', { id: 'rate-wait', class: 'hint', role: 'status', hidden: true })
  document.querySelector('main')?.prepend(notice)
  const waits = new Map<number, number>()
  let timer: ReturnType<typeof setInterval> | undefined

  const render = () => {
    const until = Math.max(0, ...waits.values())
    const seconds = Math.max(1, Math.ceil((until - Date.now()) / 1000))
    notice.hidden = waits.size === 0
    notice.textContent = waits.size ? `Too many requests from this address; continuing in ${seconds} s.` : ''
    if (waits.size === 0 && timer !== undefined) {
      clearInterval(timer)
      timer = undefined
    } else if (waits.size && timer === undefined) timer = setInterval(render, 1000)
  }

  onRateWait(({ id, until }) => {
    if (until === null) waits.delete(id)
    else waits.set(id, until)
    render()
  })
}
