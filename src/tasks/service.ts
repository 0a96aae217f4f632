import type { SubmitPlan } from '../contract/submit-plan.js';
import { AppError } from '../errors.js';
import { newTaskId } from '../ids.js';
import type { ProviderRegistry } from '../providers/registry.js';
import type { ApiKeyRecord, TaskRecord, TaskStore } from '../store/types.js';
import { expiryOf } from './expiry.js';
import { cancelTask } from './states.js';

export interface TaskServiceDeps {
  store: TaskStore;
  providers: ProviderRegistry;
  /** Told about every new task so a local worker can start on it at once. */
  onSubmitted?: (task: TaskRecord) => void;
  /** Told about a cancel so a local worker running the task stops it. */
  onCancelled?: (task: TaskRecord) => void;
  videosResultTtlHours: number;
}

/** What routes do with tasks: submit, look up (tenant-scoped). Status changes live in states.ts. */
export class TaskService {
  constructor(private readonly deps: TaskServiceDeps) {}

  submitTask(owner: ApiKeyRecord, plan: SubmitPlan): TaskRecord {
    const provider = this.deps.providers.routeModel(plan.model, plan.family);
    const task = this.deps.store.insert({
      id: newTaskId(),
      ownerKeyId: owner.id,
      family: plan.family,
      form: plan.form,
      model: plan.model,
      provider,
      request: { params: plan.params, output: plan.output, media: plan.media },
      amount: plan.amount,
      createdAt: Date.now(),
    });
    this.deps.onSubmitted?.(task);
    return task;
  }

  /** The caller's task; another key's task is a 404 exactly like an unknown id (decisions.md #6). */
  getOwnedTask(owner: ApiKeyRecord, id: string): TaskRecord {
    const task = this.deps.store.getOwned(id, owner.id);
    if (!task) throw new AppError('task_not_found', `No task with id ${id}`, { param: 'id' });
    return task;
  }

  /**
   * Cancels a queued or processing task of the caller (decisions.md #23); a finished task is a 409.
   * A worker running it is told to stop; its late result is refused by the conditional update.
   */
  cancelOwnedTask(owner: ApiKeyRecord, id: string): TaskRecord {
    const task = this.getOwnedTask(owner, id);
    const now = Date.now();
    const cancelled = cancelTask(this.deps.store, task, expiryOf(task.family, 'cancelled', now, this.deps.videosResultTtlHours), now);
    if (!cancelled) {
      const current = this.deps.store.get(id) ?? task;
      throw new AppError('invalid_task_state', `Task ${id} is ${current.status}; only queued or processing tasks can be cancelled`, { param: 'id' });
    }
    this.deps.onCancelled?.(cancelled);
    return cancelled;
  }
}
