import type { FamilyId } from './families.js';
import { MODEL_CENTER_MODELS } from './model-center-catalog.js';

/**
 * The model catalog: every model the gateway serves, its family and its price; and retention per
 * family. One place: routes validate against it, the engine bills from it, the sweeper reads it.
 */

/** How a model is billed: a fixed amount per task (or request), or per second of output. */
export interface Price {
  unit: 'task' | 'request' | 'second';
  credits: number;
}

export interface ModelEntry {
  id: string;
  family: FamilyId;
  price: Price;
}

const HOUR = 3_600_000;

export interface Retention {
  /** How long after a task finishes its result URLs work and its files are kept. */
  resultMs: number;
  /** Whether the task itself is deleted when retention ends (motion: D20). */
  deleteTask: boolean;
}

const DAY = 24 * HOUR;

/** Retention per family (D20); `videos` and Model Center follow the operator's setting (null here). */
const RETENTION: Record<FamilyId, { resultMs: number | null; deleteTask: boolean }> = {
  pic: { resultMs: DAY, deleteTask: false },
  clip: { resultMs: DAY, deleteTask: false },
  reel: { resultMs: DAY, deleteTask: false },
  motion: { resultMs: 7 * DAY, deleteTask: true },
  videos: { resultMs: null, deleteTask: false },
  'model-center': { resultMs: null, deleteTask: false },
};

export function retentionFor(family: FamilyId, videosResultTtlHours: number): Retention {
  const r = RETENTION[family];
  return { resultMs: r.resultMs ?? videosResultTtlHours * HOUR, deleteTask: r.deleteTask };
}

const perTask = (credits: number): Price => ({ unit: 'task', credits });
const perSecond = (credits: number): Price => ({ unit: 'second', credits });
const perRequest = (credits: number): Price => ({ unit: 'request', credits });
const entries = (family: FamilyId, list: Array<[string, Price]>): ModelEntry[] => list.map(([id, price]) => ({ id, family, price }));

/** Every model with its family and price (credits). Model Center models come from their own catalog. */
export const MODELS: readonly ModelEntry[] = [
  ...entries('pic', [
    ['pic', perTask(1)],
    ['pic-2', perTask(2)],
    ['pic-2-stable', perTask(2)],
    ['pic-pro', perTask(4)],
    ['pic-pro-stable', perTask(4)],
  ]),
  ...entries('clip', [
    ['clip3.1-fast', perTask(10)],
    ['clip_3_1_fast_stable', perTask(10)],
    ['clip_3_1_pro_stable', perTask(20)],
    ['clip_3_1_fast', perTask(10)],
    ['clip_3_1_pro', perTask(20)],
  ]),
  ...entries('reel', [
    ['reel-2', perTask(15)],
    ['reel-2-stable', perTask(15)],
    ['reel-2-pro', perTask(30)],
    ['reelOa2Plus', perTask(20)],
    ['reelOa2Pro', perTask(40)],
    ['reelOa2', perTask(20)],
    ['reelOa2Stable', perTask(20)],
    ['reel2Stable', perTask(15)],
  ]),
  ...entries('motion', [
    // docs/reference/api/motion.md#models: the 1.5 pro models are billed by second, the 2.0 models per task.
    ['motion_1_5_pro_480p', perSecond(1)],
    ['motion_1_5_pro_720p', perSecond(2)],
    ['motion_1_5_pro_1080p', perSecond(3)],
    ['motion_2_0_4s_5s', perTask(10)],
    ['motion_2_0_6s_10s', perTask(20)],
    ['motion_2_0_11s_15s', perTask(30)],
    ['motion_2_0', perTask(10)],
    ['motion_2_0_fast', perTask(8)],
    ['motion_2_0_pro', perTask(20)],
    ['motion_2_0_fast_pro', perTask(15)],
  ]),
  ...entries('videos', [
    ['videos', perRequest(10)],
    ['videos_fast', perRequest(6)],
  ]),
  ...MODEL_CENTER_MODELS.map((x): ModelEntry => ({ id: x.id, family: 'model-center', price: perTask(x.credits) })),
];

const BY_ID = new Map(MODELS.map((m) => [m.id, m]));

export function findModel(id: string): ModelEntry | undefined {
  return BY_ID.get(id);
}

/** Credits a task costs; `seconds` is the output length for per-second prices. */
export function priceTask(model: ModelEntry, seconds = 0): number {
  return model.price.unit === 'second' ? model.price.credits * seconds : model.price.credits;
}
