/**
 * @module
 * Catalog images (SPEC.md §4 Catalog images; DESIGN.md §3 rows Catalog extra fields, Catalog
 * images): the fields a user sends besides the reference images, and the options part of the
 * inference server's `POST /v1/catalog` (parts `options`, then `reference-0` … `reference-3` in
 * the order front, back, side, detail; one output `result`, a PNG of exactly width×height).
 */
import { z } from 'zod'
import { MAX_REFERENCES, MAX_SEED } from './catalog-limits.js'

export { MAX_REFERENCES, MAX_SEED }

/** A seed for a request that gave none (the response echoes it, so the image can be made again). */
export const randomSeed = () => crypto.getRandomValues(new Uint32Array(1))[0] % (MAX_SEED + 1)

/** The options with their seed: the one given, or one chosen now, which every random choice then follows. */
export const withSeed = <T extends { seed?: number }>(options: T): T & { seed: number } => ({
  ...options,
  seed: options.seed ?? randomSeed(),
})

export const MAX_PROMPT_LENGTH = 4000
export const CATALOG_SHADOWS = ['none', 'soft', 'hard', 'floating'] as const
export const CATALOG_LAYOUTS = ['hero', 'views'] as const
/** The share of the canvas's longer side the subject's box spans (marketplace main-image rule). */
export const SUBJECT_FILL = 0.85

export type CatalogShadow = (typeof CATALOG_SHADOWS)[number]
export type CatalogLayout = (typeof CATALOG_LAYOUTS)[number]

/** The reference part names, in order. */
export const referencePart = (index: number) => `reference-${index}`

/**
 * The field a problem about one reference names: `references.0` is the front. The inference
 * server starts its message with it (`references.1: Could not decode …`) and the edge reads it
 * back with `referenceFieldOf`, so both sides name a reference the same way.
 */
export const referenceField = (index: number) => `references.${index}`

/** The reference a message from the inference server names at its start, if any. */
export function referenceFieldOf(message: string): string | undefined {
  const named = /^(references\.\d+): /.exec(message)
  return named ? named[1] : undefined
}

const Side = z.int().min(256).max(4096)

/** What a catalog image is made with, every default applied (the edge picks the seed when none is given). */
export const CatalogOptionsSchema = z.strictObject({
  /** Recorded and passed to generative backends; the CPU generator does not interpret it. */
  prompt: z
    .string()
    // Characters as people count them (code points): an emoji is one, not two UTF-16 units.
    .refine((s) => [...s].length <= MAX_PROMPT_LENGTH, `Expected at most ${MAX_PROMPT_LENGTH} characters`)
    .default(''),
  width: Side.default(1024),
  height: Side.default(1024),
  /** Denoising steps of a generative backend; the CPU generator ignores it. */
  steps: z.int().min(1).max(100).default(30),
  seed: z.int().min(0).max(MAX_SEED),
  background: z
    .string()
    .regex(/^#[0-9A-Fa-f]{6}$/, 'Expected #RRGGBB')
    .default('#FFFFFF'),
  shadow: z.enum(CATALOG_SHADOWS).default('soft'),
  layout: z.enum(CATALOG_LAYOUTS).default('hero'),
})

export type CatalogOptions = z.infer<typeof CatalogOptionsSchema>

/** `POST /v1/catalog`, part `options`: the options and how many references follow. */
export const CatalogRequestSchema = CatalogOptionsSchema.extend({
  references: z.int().min(1).max(MAX_REFERENCES),
})

export type CatalogRequest = z.infer<typeof CatalogRequestSchema>
