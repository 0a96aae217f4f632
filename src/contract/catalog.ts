/**
 * The model catalog: every model the gateway serves, its family and its price; and retention per
 * family. One place: routes validate against it, the engine bills from it, the sweeper reads it.
 */

export type FamilyId = 'pic' | 'clip' | 'reel' | 'motion' | 'videos' | 'model-center';

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
  /** Whether the task itself is deleted when retention ends (motion: decisions.md #20). */
  deleteTask: boolean;
}

/** Retention per family (decisions.md #20); `videos` and Model Center follow the operator's setting. */
export function retentionFor(family: FamilyId, videosResultTtlHours: number): Retention {
  switch (family) {
    case 'motion':
      return { resultMs: 7 * 24 * HOUR, deleteTask: true };
    case 'videos':
    case 'model-center':
      return { resultMs: videosResultTtlHours * HOUR, deleteTask: false };
    default:
      return { resultMs: 24 * HOUR, deleteTask: false };
  }
}

const perTask = (credits: number): Price => ({ unit: 'task', credits });

export const MODELS: readonly ModelEntry[] = [
  { id: 'pic', family: 'pic', price: perTask(1) },
  { id: 'pic-2', family: 'pic', price: perTask(2) },
  { id: 'pic-2-stable', family: 'pic', price: perTask(2) },
  { id: 'pic-pro', family: 'pic', price: perTask(4) },
  { id: 'pic-pro-stable', family: 'pic', price: perTask(4) },
];

const BY_ID = new Map(MODELS.map((m) => [m.id, m]));

export function findModel(id: string): ModelEntry | undefined {
  return BY_ID.get(id);
}

/** Credits a task costs; `seconds` is the output length for per-second prices. */
export function priceTask(model: ModelEntry, seconds = 0): number {
  return model.price.unit === 'second' ? model.price.credits * seconds : model.price.credits;
}

export function modelsOf(family: FamilyId): string[] {
  return MODELS.filter((m) => m.family === family).map((m) => m.id);
}
