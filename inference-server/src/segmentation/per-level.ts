/**
 * @module
 * A model per quality level (issue 25): `SEGMENTATION_MODEL` / `SEGMENTATION_PROFILE` set every
 * level's model, `SEGMENTATION_MODEL_FAST|BALANCED|HIGH` and `SEGMENTATION_PROFILE_…` one level's.
 * Each distinct model is loaded once and shared by the levels that name it; before any is loaded,
 * the sessions' estimated memory is checked against the budget, so a set that does not fit is
 * refused at start with the reason instead of dying of an out-of-memory kill on the first request.
 */
import { totalmem } from 'node:os'
import { QUALITIES, type Quality } from '../options.js'
import { type Segmenter, segmenterFor } from './index.js'
import { type ModelOptions, planSession, type SessionPlan } from './model.js'

/** One level's model: a file and its profile, or neither (the built-in ISNet). */
export interface LevelModel {
  modelPath?: string
  profile?: string
}

/**
 * Reads the per-level model settings. A level that names its own file does not inherit
 * `SEGMENTATION_PROFILE` (that names the shared file's profile).
 * @example levelModelsFromEnv({ SEGMENTATION_MODEL_HIGH: '/models/birefnet.onnx' }).high // { modelPath: '/models/birefnet.onnx' }
 */
export function levelModelsFromEnv(env: Record<string, string | undefined>): Record<Quality, LevelModel> {
  const base: LevelModel = {
    modelPath: env.SEGMENTATION_MODEL || undefined,
    profile: env.SEGMENTATION_PROFILE || undefined,
  }
  const out = {} as Record<Quality, LevelModel>
  for (const quality of QUALITIES) {
    const key = quality.toUpperCase()
    const own = env[`SEGMENTATION_MODEL_${key}`] || undefined
    const profile = env[`SEGMENTATION_PROFILE_${key}`] || (own ? undefined : base.profile)
    out[quality] = { modelPath: own ?? base.modelPath, profile }
  }
  return out
}

/**
 * What onnxruntime holds per session on the CPU, roughly: the weights as float32 (fp16 files are
 * computed in float32 there) and the activations, ~1,000 bytes per input pixel. Calibrated on the
 * built-in ISNet at 1024², whose session keeps its runs' memory (session-memory.ts): a peak of
 * 1.40 GB RSS for the whole server, of which ~0.13 GB is Node and 0.18 GB the weights by this rule
 * (bench/results/soak-s15-arena-nopattern.json; docs/models.md "Memory"). It was 450 bytes,
 * calibrated on the server's RSS between requests with the arena off (0.78 GB), under its 1.56 GB
 * peak during a run.
 */
export const ACTIVATION_BYTES_PER_PIXEL = 1000

export function sessionBytes(plan: Pick<SessionPlan, 'paramsM' | 'input'>): number {
  const { width, height } = plan.input.native
  return plan.paramsM * 1e6 * 4 + width * height * ACTIVATION_BYTES_PER_PIXEL
}

/** `INFERENCE_MEMORY_MB`, or the machine's memory. */
export function memoryBudgetFromEnv(env: Record<string, string | undefined>): number {
  const raw = env.INFERENCE_MEMORY_MB
  if (raw === undefined || raw === '') return totalmem()
  const mb = Number(raw)
  if (!Number.isInteger(mb) || mb < 1)
    throw new Error(`Expected a positive integer for INFERENCE_MEMORY_MB but received ${raw} of type string`)
  return mb * 1024 * 1024
}

const mb = (bytes: number) => Math.round(bytes / (1024 * 1024))

/**
 * @throws {Error} naming each model's estimate when together they exceed `budget` bytes
 */
export function checkMemory(plans: SessionPlan[], sessions: number, budget: number): void {
  const each = plans.map((p) => ({ version: p.version, bytes: sessionBytes(p) * sessions }))
  const total = each.reduce((a, e) => a + e.bytes, 0)
  if (total <= budget) return
  const list = each.map((e) => `${e.version} ~${mb(e.bytes)} MB`).join(', ')
  throw new Error(
    `The segmentation models do not fit: ${list} (${sessions} session${sessions > 1 ? 's' : ''} each) need ~${mb(total)} MB, ` +
      `more than the ${mb(budget)} MB budget (INFERENCE_MEMORY_MB, else the machine's memory). ` +
      'Use fewer or smaller models, fewer INFERENCE_SESSIONS, or raise INFERENCE_MEMORY_MB (docs/models.md).',
  )
}

type CommonOptions = Omit<ModelOptions, 'modelPath' | 'profile'> & { sessions?: number; memoryBudget?: number }

/**
 * The segmenter of every level: one per distinct model, shared. With one model for all levels it
 * is that model's segmenter as before; otherwise `balanced`'s, whose `forLevel` gives the others.
 * @throws {Error} from recognition (recognize.ts), the memory check or a session's load
 */
export async function createLevelSegmenters(
  levels: Record<Quality, LevelModel>,
  { sessions = 1, memoryBudget = totalmem(), ...options }: CommonOptions = {},
): Promise<Segmenter> {
  // Levels with the same settings share one plan (a file is read and hashed once); settings that
  // resolve to the same file and profile (one named, one recognised) share it too.
  const bySettings = new Map<string, SessionPlan>()
  const planned = new Map<string, SessionPlan>()
  const planOf = {} as Record<Quality, SessionPlan>
  // Configured files first: their errors (recognition) come before the built-in model's preparation.
  const order = [...QUALITIES].sort((a, b) => Number(!levels[a].modelPath) - Number(!levels[b].modelPath))
  for (const quality of order) {
    const settings = `${levels[quality].modelPath ?? ''}\0${levels[quality].profile ?? ''}`
    const plan = bySettings.get(settings) ?? (await planSession({ ...options, ...levels[quality] }))
    bySettings.set(settings, plan)
    const key = `${plan.path}\0${plan.profile.name}`
    planOf[quality] = planned.get(key) ?? plan
    planned.set(key, planOf[quality])
  }
  const plans = [...planned.values()]
  for (const plan of plans)
    if (!plan.profile.commercial) console.warn(`${plan.version}: ${plan.profile.licence} (docs/models.md)`)
  checkMemory(plans, sessions, memoryBudget)
  const started = new Map<SessionPlan, Segmenter>()
  try {
    for (const plan of plans) started.set(plan, await segmenterFor(plan, sessions))
  } catch (err) {
    await Promise.all([...started.values()].map((s) => s.close()))
    throw err
  }
  const balanced = started.get(planOf.balanced) as Segmenter
  if (started.size === 1) return balanced
  const byLevel = (quality: Quality) => started.get(planOf[quality]) as Segmenter
  return {
    ...balanced,
    segment: (image, size) => balanced.segment(image, size),
    forLevel: byLevel,
    close: async () => {
      await Promise.all([...started.values()].map((s) => s.close()))
    },
  }
}
