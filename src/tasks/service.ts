import type { SubmitPlan } from '../contract/submit-plan.js';
import { AppError } from '../errors.js';
import { newTaskId } from '../ids.js';
import type { ProviderRegistry } from '../providers/registry.js';
import type { ApiKeyRecord, TaskRecord, TaskStore } from '../store/types.js';

export interface TaskServiceDeps {
  store: TaskStore;
  providers: ProviderRegistry;
  /** Told about every new task so a local worker can start on it at once. */
  onSubmitted?: (task: TaskRecord) => void;
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
      request: { params: plan.params, output: plan.output },
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
}
