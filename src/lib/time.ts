export const iso = (ms: number = Date.now()) => new Date(ms).toISOString()

export const HOUR_MS = 3_600_000
export const DAY_MS = 24 * HOUR_MS
