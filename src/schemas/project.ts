/**
 * @module
 * Projects and editing (SPEC.md §2 Recipe, strokes, refinements; DESIGN.md §3 Projects,
 * Refinements, Exports): the request bodies (strict, validated with the shared contract's
 * schemas) and the resources as the API shows them.
 */
import { z } from '@hono/zod-openapi'
import { Uuid } from './common'
import * as editing from '../contract/editing'
import { JOB_STATUSES } from '../contract/stages'
import { ResultSchema } from './job'

const DateTime = z.iso.datetime()
const Problem = z.object({ code: z.string(), message: z.string() })

const IDS = {
  project: '8e2f4a6c-1b3d-4c5e-9f7a-2d4b6c8e0a1f',
  job: '6f1c2a9e-3b7d-4e0a-9c55-2d8e1f4b7a10',
  revision1: '1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d',
  revision2: '2b3c4d5e-6f7a-4b8c-9d0e-1f2a3b4c5d6e',
  refinement: '3c4d5e6f-7a8b-4c9d-8e1f-2a3b4c5d6e7f',
  export: '4d5e6f7a-8b9c-4d0e-9f2a-3b4c5d6e7f80',
}
const projectPath = `/v1/projects/${IDS.project}`

export const RecipeSchema = editing.RecipeSchema.openapi('Recipe', {
  example: { version: 1, background: { type: 'color', color: '#FFFFFF' }, crop: true, margin: 20 },
})
export const StrokeSchema = editing.StrokeSchema.openapi('Stroke', {
  example: { tool: 'restore', points: [[0.5, 0.5]], size: 0.05, hardness: 1, opacity: 1 },
})
export const BoxSchema = editing.BoxSchema.openapi('Box', { example: { x: 0.25, y: 0.2, width: 0.3, height: 0.25 } })
export const RefinementPointSchema = editing.RefinementPointSchema.openapi('RefinementPoint', {
  example: { x: 0.52, y: 0.41, label: 'foreground' },
})

const EXAMPLE_PROJECT = {
  id: IDS.project,
  name: 'Mug, front',
  sourceJobId: IDS.job,
  width: 3000,
  height: 2000,
  currentRevisionId: IDS.revision2,
  refinementsUsed: 1,
  createdAt: '2026-05-04T09:31:00.000Z',
  links: { self: projectPath, revisions: `${projectPath}/revisions`, events: `${projectPath}/events` },
}

export const ProjectCreateSchema = z
  .strictObject({
    jobId: Uuid.openapi({ description: 'A succeeded removal job of this workspace' }),
    name: z.string().min(1).max(200).optional(),
  })
  .openapi('ProjectCreate', { example: { jobId: IDS.job, name: 'Mug, front' } })

export const ProjectSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    sourceJobId: z.uuid(),
    width: z.int(),
    height: z.int(),
    currentRevisionId: z.uuid(),
    refinementsUsed: z.int(),
    createdAt: DateTime,
    links: z.object({ self: z.string(), revisions: z.string(), events: z.string() }),
  })
  .openapi('Project', { example: EXAMPLE_PROJECT })

export const ProjectListSchema = z
  .object({ projects: z.array(ProjectSchema), nextCursor: z.string().nullable() })
  .openapi('ProjectList', { example: { projects: [EXAMPLE_PROJECT], nextCursor: null } })

export const ProjectListQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20).optional().openapi({ example: 20 }),
  cursor: z
    .string()
    .max(200)
    .optional()
    .openapi({ description: 'nextCursor of the previous page', example: 'MjAyNi0wNS0wNFQwOTozMTowMC4wMDBafDhl' }),
})

const EXAMPLE_STROKE = {
  tool: 'erase' as const,
  points: [[0.41, 0.62] as [number, number]],
  size: 0.03,
  hardness: 0.8,
  opacity: 1,
}
const EXAMPLE_REVISION = {
  id: IDS.revision2,
  projectId: IDS.project,
  number: 2,
  baseRevisionId: IDS.revision1,
  restoreRevisionId: null,
  strokes: [EXAMPLE_STROKE],
  recipe: null,
  refinementId: null,
  createdAt: '2026-05-04T09:32:00.000Z',
  links: {
    self: `${projectPath}/revisions/${IDS.revision2}`,
    mask: `${projectPath}/revisions/${IDS.revision2}/mask`,
  },
}

/** Undo, then edit: the earlier revision an edit starts from, while its base stays the newest (docs/decisions.md). */
const RestoreRevisionId = Uuid.openapi({
  description:
    'An earlier revision of this project to start from instead of the base (undo, then edit): the new revision is its mask with the strokes applied, and its recipe unless one is given. baseRevisionId must still be the newest revision.',
})

export const RevisionCreateSchema = z
  .strictObject({
    baseRevisionId: Uuid.openapi({ description: 'The newest revision, which this edit is based on' }),
    restoreRevisionId: RestoreRevisionId.optional(),
    strokes: z.array(StrokeSchema).max(editing.MAX_STROKES).optional(),
    recipe: RecipeSchema.optional(),
  })
  .refine((r) => (r.strokes?.length ?? 0) > 0 || r.recipe !== undefined || r.restoreRevisionId !== undefined, {
    message: 'Expected at least one stroke, a recipe or a revision to restore',
    path: ['strokes'],
  })
  .openapi('RevisionCreate', { example: { baseRevisionId: IDS.revision1, strokes: [EXAMPLE_STROKE] } })

export const RevisionSchema = z
  .object({
    id: z.uuid(),
    projectId: z.uuid(),
    number: z.int(),
    baseRevisionId: z.uuid().nullable(),
    restoreRevisionId: z.uuid().nullable().openapi({
      description: 'The earlier revision this one started from instead of its base; null when it built on its base',
    }),
    strokes: z.array(StrokeSchema),
    recipe: RecipeSchema.nullable(),
    refinementId: z.uuid().nullable(),
    createdAt: DateTime,
    links: z.object({ self: z.string(), mask: z.string() }),
  })
  .openapi('Revision', { example: EXAMPLE_REVISION })

export const RevisionListSchema = z
  .object({ revisions: z.array(RevisionSchema) })
  .openapi('RevisionList', { example: { revisions: [EXAMPLE_REVISION] } })

const EXAMPLE_REFINEMENT = {
  id: IDS.refinement,
  projectId: IDS.project,
  status: 'succeeded' as const,
  baseRevisionId: IDS.revision1,
  restoreRevisionId: null,
  revisionId: IDS.revision2,
  points: [{ x: 0.52, y: 0.41, label: 'foreground' as const }],
  box: { x: 0.25, y: 0.2, width: 0.3, height: 0.25 },
  error: null,
  createdAt: '2026-05-04T09:33:00.000Z',
  completedAt: '2026-05-04T09:33:04.200Z',
}

export const RefinementCreateSchema = z
  .strictObject({
    baseRevisionId: Uuid.openapi({ description: 'The newest revision, which the refinement improves' }),
    restoreRevisionId: RestoreRevisionId.optional(),
    points: z.array(RefinementPointSchema).min(1).max(editing.MAX_REFINEMENT_POINTS).optional(),
    box: BoxSchema.optional(),
  })
  .refine((r) => r.points !== undefined || r.box !== undefined, {
    message: 'Expected points, a box, or both',
    path: ['points'],
  })
  .openapi('RefinementCreate', {
    // The refine above, said to the document (its message and field stay the validator's).
    description: 'Points, a box, or both.',
    anyOf: [{ required: ['points'] }, { required: ['box'] }],
    example: { baseRevisionId: IDS.revision1, box: EXAMPLE_REFINEMENT.box, points: EXAMPLE_REFINEMENT.points },
  })

/** A refinement's status is its job's; `canceled` when its project was deleted while it ran. */
export const RefinementSchema = z
  .object({
    id: z.uuid(),
    projectId: z.uuid(),
    status: z.enum(JOB_STATUSES),
    baseRevisionId: z.uuid(),
    restoreRevisionId: z
      .uuid()
      .nullable()
      .openapi({ description: 'The earlier revision it refines instead of its base; null when it refines its base' }),
    revisionId: z.uuid().nullable().openapi({ description: 'The revision it made, once succeeded' }),
    points: z.array(RefinementPointSchema).optional(),
    box: BoxSchema.optional(),
    error: Problem.nullable(),
    createdAt: DateTime,
    completedAt: DateTime.nullable(),
  })
  .openapi('Refinement', { example: EXAMPLE_REFINEMENT })

const EXAMPLE_EXPORT = {
  id: IDS.export,
  projectId: IDS.project,
  revisionId: IDS.revision2,
  format: 'jpeg' as const,
  recipe: { version: 1 as const, background: { type: 'color' as const, color: '#FFFFFF' }, crop: true, margin: 20 },
  status: 'succeeded' as const,
  result: {
    url: `${projectPath}/exports/${IDS.export}/result?exp=1777887601&sig=9c1e5d0b7a3f28e4c6b1d9a05f7e3c2b8a4d6f1e0c9b7a5d3f2e1c0b9a8d7f6e`,
    contentType: 'image/jpeg',
    expiresAt: '2026-05-04T09:44:01.000Z',
  },
  error: null,
  createdAt: '2026-05-04T09:34:00.000Z',
  completedAt: '2026-05-04T09:34:00.900Z',
  expiresAt: '2026-05-05T09:34:00.900Z',
}

export const ExportCreateSchema = z
  .strictObject({
    revisionId: Uuid.optional().openapi({ description: 'Default: the current revision' }),
    format: z.enum(editing.EXPORT_FORMATS).default('png'),
    recipe: RecipeSchema.optional().openapi({ description: "Default: the revision's recipe, else none" }),
  })
  .openapi('ExportCreate', {
    example: { format: 'jpeg', recipe: EXAMPLE_EXPORT.recipe },
  })

export const ExportSchema = z
  .object({
    id: z.uuid(),
    projectId: z.uuid(),
    revisionId: z.uuid(),
    format: z.enum(editing.EXPORT_FORMATS),
    recipe: RecipeSchema,
    status: z.enum(JOB_STATUSES),
    result: ResultSchema.nullable(),
    error: Problem.nullable(),
    createdAt: DateTime,
    completedAt: DateTime.nullable(),
    expiresAt: DateTime.nullable().openapi({ description: 'When the bytes are deleted (24 h after completion)' }),
  })
  .openapi('Export', { example: EXAMPLE_EXPORT })

export type Project = z.infer<typeof ProjectSchema>
export type Revision = z.infer<typeof RevisionSchema>
export type Refinement = z.infer<typeof RefinementSchema>
export type Export = z.infer<typeof ExportSchema>
export type RefinementCreate = z.infer<typeof RefinementCreateSchema>
export type ExportCreate = z.infer<typeof ExportCreateSchema>
