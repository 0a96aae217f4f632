/**
 * The task store as the engine sees it, telling `onFinished` of each task this process moves to a
 * terminal state (G224: submit-to-terminal times are observed where the transition is won; every
 * terminal transition is one `updateIf` in tasks/states.ts). Every other method is the store's own.
 */
import type { TaskRecord, TaskStore } from '../store/types.js';
import { isFinished } from '../tasks/states.js';

export function observeTerminal(store: TaskStore, onFinished: (task: TaskRecord) => void): TaskStore {
  const updateIf: TaskStore['updateIf'] = async (id, guard, patch, settle) => {
    const row = await store.updateIf(id, guard, patch, settle);
    if (row && patch.status !== undefined && isFinished(patch.status)) onFinished(row);
    return row;
  };
  const bound = new Map<PropertyKey, unknown>([['updateIf', updateIf]]);
  return new Proxy(store, {
    get(target, prop) {
      if (bound.has(prop)) return bound.get(prop);
      const value: unknown = Reflect.get(target, prop, target);
      if (typeof value !== 'function') return value;
      const fn = (value as (...args: unknown[]) => unknown).bind(target);
      bound.set(prop, fn);
      return fn;
    },
  });
}
