/**
 * @module
 * Catalog images (SPEC.md §4; DESIGN.md §3 Catalog extra fields): the multipart request. Its
 * fields are the shared contract's `CatalogOptions`, with their types, bounds and defaults, so the
 * document says `width` is an integer 256–4096 defaulting to 1024 (a multipart part carries it as
 * its decimal text, as generated clients send a number); `src/services/catalog.ts` reads the parts
 * into the same schema, naming the part on any error.
 */
import { z } from '@hono/zod-openapi'
import {
  CATALOG_LAYOUTS,
  CATALOG_SHADOWS,
  CatalogOptionsSchema,
  MAX_PROMPT_LENGTH,
  MAX_REFERENCES,
} from '../contract/catalog'
import { filesPart, multipartSchema } from './multipart'

const option = CatalogOptionsSchema.shape

export const CatalogMultipartSchema = multipartSchema('CatalogImageMultipart', {
  references: filesPart(
    'One to four images of the same product, in the order front, back, side, detail (repeat the part). JPEG, PNG, WebP, AVIF, HEIC or HEIF; each ≤ 50 MB, ≤ 25 MP, ≥ 32×32',
    1,
    MAX_REFERENCES,
  ),
  prompt: option.prompt.openapi({
    description: `At most ${MAX_PROMPT_LENGTH} characters, any Unicode; passed to generative backends`,
    example: 'Ceramic mug, studio light',
  }),
  width: option.width.openapi({ description: 'Output width in pixels', example: 1024 }),
  height: option.height.openapi({ description: 'Output height in pixels', example: 1024 }),
  steps: option.steps.openapi({ description: 'Denoising steps for generative backends', example: 30 }),
  seed: option.seed
    .optional()
    .openapi({ description: 'Default random; the one used is echoed in X-Generation-Seed', example: 42 }),
  background: option.background.openapi({ description: 'The background colour, #RRGGBB', example: '#FFFFFF' }),
  shadow: option.shadow.openapi({ description: `${CATALOG_SHADOWS.join(', ')}`, example: 'soft' }),
  layout: option.layout.openapi({
    description: `${CATALOG_LAYOUTS.join(', ')} (hero: the front view alone; views: every reference side by side)`,
    example: 'hero',
  }),
})

const DateTime = z.iso.datetime({ offset: true })

const EXAMPLE_CATALOG_IMAGE = {
  id: '9a7c5e3b-1d2f-4a6b-8c0e-2f4d6b8a0c1e',
  seed: 42,
  width: 1024,
  height: 1024,
  references: 2,
  layout: 'hero' as const,
  shadow: 'soft' as const,
  background: '#FFFFFF',
  prompt: 'Ceramic mug, studio light',
  createdAt: '2026-05-04T09:30:00.000Z',
  expiresAt: '2026-05-05T09:30:00.000Z',
  expired: false,
  links: { self: '/v1/catalog-images/9a7c5e3b-1d2f-4a6b-8c0e-2f4d6b8a0c1e' },
}

/** A catalog image the workspace made, as `GET /v1/catalog-images` lists it (its PNG is at links.self). */
export const CatalogImageSchema = z
  .object({
    id: z.uuid(),
    seed: z.int().openapi({ description: 'Send it as `seed` with the same references and fields to make it again' }),
    width: z.int(),
    height: z.int(),
    references: z.int().min(1).max(MAX_REFERENCES),
    layout: z.enum(CATALOG_LAYOUTS),
    shadow: z.enum(CATALOG_SHADOWS),
    background: z.string(),
    prompt: z.string(),
    createdAt: DateTime,
    expiresAt: DateTime.nullable(),
    expired: z.boolean().openapi({ description: 'The PNG is past its 24 hours: links.self answers 410' }),
    links: z.object({ self: z.string() }),
  })
  .openapi('CatalogImage', { example: EXAMPLE_CATALOG_IMAGE })

export const CatalogImageListQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20).optional().openapi({ example: 20 }),
  cursor: z.string().max(200).optional().openapi({
    description: 'nextCursor of the previous page',
    example: 'MjAyNi0wNS0wNFQwOTozMDowMC4wMDBafDlhN2M1ZTNiLTFkMmYtNGE2Yi04YzBlLTJmNGQ2YjhhMGMxZQ',
  }),
})

export const CatalogImageListSchema = z
  .object({ catalogImages: z.array(CatalogImageSchema), nextCursor: z.string().nullable() })
  .openapi('CatalogImageList', { example: { catalogImages: [EXAMPLE_CATALOG_IMAGE], nextCursor: null } })
