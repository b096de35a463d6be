/**
 * The editor's Export form: a recipe (background transparent or a colour, crop to the subject
 * with a margin, width and height) and a format, rendered by the API from the revision on show
 * and downloaded as `<project>-r<number>.<ext>`.
 */
import type { Recipe } from '../../../src/contract/editing'
import { describeError } from '../api'
import { busy, byId } from '../dom'
import { type ExportFormat, exportBytes, type Project, type Revision, renderExport } from './project'

const EXTENSIONS: Record<ExportFormat, string> = { png: 'png', webp: 'webp', jpeg: 'jpg', zip: 'zip', psd: 'psd' }

interface ExportContext {
  project(): Project
  revision(): Revision
  onError(message: string | null): void
}

function readRecipe(): Recipe {
  const value = (id: string) => byId<HTMLInputElement | HTMLSelectElement>(id).value
  const recipe: Recipe = { version: 1 }
  recipe.background =
    value('export-background') === 'color' ? { type: 'color', color: value('export-color') } : { type: 'transparent' }
  if (byId<HTMLInputElement>('export-crop').checked) recipe.crop = true
  const margin = Number(value('export-margin'))
  if (margin > 0) recipe.margin = margin
  // Empty means "keep the region's own size"; the API checks the numbers and names the field.
  if (value('export-width')) recipe.width = Number(value('export-width'))
  if (value('export-height')) recipe.height = Number(value('export-height'))
  return recipe
}

/** `Mug, front` → `Mug-front`: a file name from the project's name. */
const fileStem = (name: string) =>
  name
    .replace(/\.[^.]+$/, '')
    .replace(/[^\w-]+/g, '-')
    .replace(/^-+|-+$/g, '') || 'cutout'

export function setUpExport(ctx: ExportContext): void {
  const form = byId<HTMLFormElement>('export-form')
  const background = byId<HTMLSelectElement>('export-background')
  const statusLine = byId('export-status')
  const link = byId<HTMLAnchorElement>('export-link')
  background.addEventListener('change', () => {
    byId('export-color-label').hidden = background.value !== 'color'
  })
  form.addEventListener('submit', (event) => {
    event.preventDefault()
    const button = form.querySelector<HTMLButtonElement>('button[type="submit"]')!
    void busy(button, async () => {
      ctx.onError(null)
      const format = byId<HTMLSelectElement>('export-format').value as ExportFormat
      const revision = ctx.revision()
      statusLine.textContent = `Rendering revision ${revision.number} as ${format.toUpperCase()}…`
      try {
        const made = await renderExport(ctx.project().id, { revisionId: revision.id, format, recipe: readRecipe() })
        const blob = await exportBytes(made)
        if (link.href) URL.revokeObjectURL(link.href)
        link.href = URL.createObjectURL(blob)
        link.download = `${fileStem(ctx.project().name)}-r${revision.number}.${EXTENSIONS[format]}`
        link.hidden = false
        link.click()
        statusLine.textContent = `Revision ${revision.number} as ${format.toUpperCase()}, ${Math.max(1, Math.round(blob.size / 1024))} KB.`
      } catch (err) {
        statusLine.textContent = ''
        ctx.onError(describeError(err))
      }
    })
  })
}
