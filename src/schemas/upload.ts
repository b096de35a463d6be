import { z } from '@hono/zod-openapi'

export const UploadSchema = z
  .object({
    id: z.uuid(),
    status: z.enum(['pending', 'ready']),
    expiresAt: z.iso.datetime(),
    uploadUrl: z.string(),
    width: z.number().int().optional(),
    height: z.number().int().optional(),
    mimeType: z.string().optional(),
  })
  .openapi('Upload')

export type Upload = z.infer<typeof UploadSchema>
