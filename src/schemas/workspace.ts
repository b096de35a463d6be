import { z } from '@hono/zod-openapi'

export const WorkspaceSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    role: z.string().openapi({ example: 'owner' }),
    current: z.boolean().openapi({ description: 'The workspace this session acts for' }),
  })
  .openapi('Workspace')

export const WorkspaceListSchema = z.object({ workspaces: z.array(WorkspaceSchema) }).openapi('WorkspaceList', {
  example: {
    workspaces: [{ id: 'f0e1d2c3-b4a5-4968-8776-655443322110', name: 'Personal', role: 'owner', current: true }],
  },
})

export type Workspace = z.infer<typeof WorkspaceSchema>
