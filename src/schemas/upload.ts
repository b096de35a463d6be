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
  .openapi('Upload', {
    example: {
      id: '0b7f1d1e-8c1a-4c2e-9d55-0f6c3c1c2f11',
      status: 'ready',
      expiresAt: '2026-05-04T10:30:00.000Z',
      uploadUrl: '/v1/uploads/0b7f1d1e-8c1a-4c2e-9d55-0f6c3c1c2f11/content',
      width: 3024,
      height: 4032,
      mimeType: 'image/jpeg',
    },
  })

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
  .openapi('UploadRequest', { example: { contentType: 'image/jpeg' } })

export type Upload = z.infer<typeof UploadSchema>
