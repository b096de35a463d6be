/**
 * @module
 * Catalog images (SPEC.md §4; DESIGN.md §3 Catalog extra fields): the multipart request. Every
 * part is a string or file as sent; `src/services/catalog.ts` turns them into the shared
 * contract's `CatalogOptions`, naming the part on any error.
 */
import { z } from '@hono/zod-openapi'
import { filesPart, multipartSchema } from './multipart'
import { CATALOG_LAYOUTS, CATALOG_SHADOWS, MAX_PROMPT_LENGTH, MAX_REFERENCES } from '../contract/catalog'

const text = (description: string, example: string) => z.string().optional().openapi({ description, example })

export const CatalogMultipartSchema = multipartSchema('CatalogImageMultipart', {
  references: filesPart(
    'One to four images of the same product, in the order front, back, side, detail (repeat the part). JPEG, PNG, WebP, AVIF, HEIC or HEIF; each ≤ 50 MB, ≤ 25 MP, ≥ 32×32',
    1,
    MAX_REFERENCES,
  ),
  prompt: text(
    `At most ${MAX_PROMPT_LENGTH} characters, any Unicode; passed to generative backends`,
    'Ceramic mug, studio light',
  ),
  width: text('Output width, 256–4096 (default 1024)', '1024'),
  height: text('Output height, 256–4096 (default 1024)', '1024'),
  steps: text('Denoising steps for generative backends, 1–100 (default 30)', '30'),
  seed: text('0–4294967295; default random, echoed in X-Generation-Seed', '42'),
  background: text('#RRGGBB (default #FFFFFF)', '#FFFFFF'),
  shadow: text(`${CATALOG_SHADOWS.join(', ')} (default soft)`, 'soft'),
  layout: text(`${CATALOG_LAYOUTS.join(', ')} (default hero: the front view alone)`, 'hero'),
})
