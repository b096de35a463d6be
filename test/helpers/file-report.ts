/** What the fixture server's `POST /inspect` says about an image (file-inspector.ts); no imports, so workerd tests can use it. */
export interface ImageReport {
  format: string
  width: number
  height: number
  channels: number
  /** sha256 hex of the file's bytes. */
  sha256: string
  /** The first channel's pixels, row-major, base64 (with `pixels=1`). */
  channel0?: string
  /** The alpha channel's pixels (255 where the file has none), row-major, base64 (with `pixels=1`). */
  alpha?: string
  /** RGB(A) of the four corners and edge midpoints: [x, y, r, g, b, a]. */
  border: number[][]
}
