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
    uploadHeaders: z
      .record(z.string(), z.string())
      .optional()
      .openapi({ description: 'Headers the PUT to a presigned uploadUrl must carry exactly' }),
  })
  .openapi('Upload')

export const UPLOAD_CONTENT_TYPES = [
  'application/octet-stream',
  'image/jpeg',
  'image/png',
  'image/webp',
  'image/avif',
  'image/heic',
  'image/heif',
] as const

export const UploadRequestSchema = z
  .strictObject({
    contentType: z
      .enum(UPLOAD_CONTENT_TYPES)
      .optional()
      .openapi({ description: 'The Content-Type a presigned PUT will send (default application/octet-stream)' }),
  })
  .openapi('UploadRequest')

export type Upload = z.infer<typeof UploadSchema>
