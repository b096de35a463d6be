/**
 * @module
 * Catalog images (SPEC.md §4; DESIGN.md §3 Catalog extra fields): the multipart request. Every
 * part is a string or file as sent; `src/services/catalog.ts` turns them into the shared
 * contract's `CatalogOptions`, naming the part on any error.
 */
import { z } from '@hono/zod-openapi'
import { CATALOG_LAYOUTS, CATALOG_SHADOWS, MAX_PROMPT_LENGTH, MAX_REFERENCES } from '../contract/catalog'

const text = (description: string, example: string) => z.string().optional().openapi({ description, example })

// Strict like every multipart body: a part that is not listed is refused, naming it.
export const CatalogMultipartSchema = z
  .strictObject({
    references: z.any().openapi({
      type: 'array',
      items: { type: 'string', format: 'binary' },
      minItems: 1,
      maxItems: MAX_REFERENCES,
      description:
        'One to four images of the same product, in the order front, back, side, detail (repeat the part). JPEG, PNG, WebP, AVIF, HEIC or HEIF; each ≤ 50 MB, ≤ 25 MP, ≥ 32×32',
    }),
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
  .openapi('CatalogImageMultipart')
