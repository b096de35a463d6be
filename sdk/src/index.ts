/**
 * @module
 * `@cutout/sdk`: a typed client for the Cutout image API (fetch only: Node 22.12+ and browsers; no
 * `node:` import is reachable from here, a test bundles it for the browser). File-system helpers
 * for Node are in `@cutout/sdk/node`.
 */
export { type SessionStore, type SessionTokens, type TokenPair, memorySession, toSession } from './auth.js'
export {
  type StorageArea,
  type StorageSession,
  type StorageSessionOptions,
  storageSession,
} from './browser-session.js'
export {
  Cutout,
  type CutoutOptions,
  DEFAULT_OPTIONS,
  JobFailedError,
  jobProblem,
  type ApiKey,
  type Batch,
  type CatalogImage,
  type CatalogImageOptions,
  type CatalogImageResult,
  type Job,
  type ListCatalogImagesQuery,
  type ListJobsQuery,
  type RemovalOptions,
  type RemoveResult,
  type Schemas,
  type Source,
  type TryOnOptions,
  type Upload,
  type Usage,
} from './client.js'
export { type DeviceAuthorization, type DeviceLoginOptions, deviceLogin } from './device.js'
export { type ImageInput, sniffImageType } from './image.js'
export { CutoutProblem, type ProblemBody, retryAfterSeconds } from './problem.js'
export { backoffMs, type RetryOptions } from './retry.js'
export { TERMINAL_STATUSES, type TerminalStatus } from './contract.js'
export type { components, operations, paths } from './schema.js'
export { readSse, type SseEvent } from './sse.js'
export {
  type FollowOptions,
  followEvents,
  isTerminal,
  isTerminalStatus,
  type OpenEvents,
  type WaitOptions,
  waitForJob,
} from './wait.js'
