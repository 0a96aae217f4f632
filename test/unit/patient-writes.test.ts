/**
 * G258, G261: a worker holding a task waits out an unreachable database (its state change is
 * written again, not turned into a failed attempt) and an unreachable bucket (the same result is
 * uploaded again, no new generation). A write applied just before its connection broke is
 * recognised when the retry's guard fails, so a completed task's files are never discarded.
 */
import { describe, expect, it } from 'vitest';
import { S3StorageError } from '../../src/media/s3-storage-error.js';
import type { ProviderOutput } from '../../src/providers/types.js';
import type { TaskPatch, TaskRecord, TaskStore } from '../../src/store/types.js';
import { storeResultPatiently } from '../../src/tasks/patient-upload.js';
import { patientTaskStore } from '../../src/tasks/patient-store.js';
import type { StoredOutput } from '../../src/tasks/result-storage.js';

const dropped = (): Error => new Error('Connection terminated unexpectedly');
const log = { warn: () => undefined, info: () => undefined };
const noWait = async (): Promise<void> => undefined;

/** A task store of one task whose `updateIf` fails `failures` times first (applying the change before the first failure when `appliedFirst`). */
function flakyStore(
  failures: number,
  appliedFirst = false,
): { store: TaskStore; calls: () => number; task: () => TaskRecord; set: (patch: TaskPatch) => void } {
  let task = { id: 't1', status: 'processing', leaseOwner: 'w1', result: null, upstream: null, error: null } as unknown as TaskRecord;
  let calls = 0;
  const apply = (patch: TaskPatch): TaskRecord => {
    task = { ...task, ...patch } as TaskRecord;
    return task;
  };
  const store = {
    updateIf: async (_id: string, guard: { leaseOwner?: string; statusIn: string[] }, patch: TaskPatch) => {
      calls++;
      if (calls === 1 && appliedFirst) apply(patch);
      if (calls <= failures) throw dropped();
      if (!guard.statusIn.includes(task.status) || (guard.leaseOwner !== undefined && task.leaseOwner !== guard.leaseOwner)) return undefined;
      return apply(patch);
    },
    get: async () => task,
  } as unknown as TaskStore;
  return {
    store,
    calls: () => calls,
    task: () => task,
    set: (patch) => {
      apply(patch);
    },
  };
}

const completing = {
  status: 'completed',
  leaseOwner: null,
  result: { files: [{ name: 'image.ab12.png', contentType: 'image/png', bytes: 3 }] },
} as unknown as TaskPatch;

describe("a worker's state changes while the database cannot be reached (G258)", () => {
  it('are written again until the database answers', async () => {
    const { store, calls, task } = flakyStore(3);
    const faults: unknown[] = [];
    const patient = patientTaskStore(store, { log, giveUp: () => false, sleep: noWait, onStoreFault: (err) => faults.push(err) });
    const row = await patient.updateIf('t1', { statusIn: ['processing'], leaseOwner: 'w1' }, completing);
    expect(row?.status).toBe('completed');
    expect(calls()).toBe(4);
    expect(faults).toHaveLength(3);
    expect(task().status).toBe('completed');
  });

  it('a change applied before its connection broke is recognised, not reported as lost', async () => {
    const { store, calls } = flakyStore(1, true);
    const patient = patientTaskStore(store, { log, giveUp: () => false, sleep: noWait });
    const row = await patient.updateIf('t1', { statusIn: ['processing'], leaseOwner: 'w1' }, completing);
    expect(calls()).toBe(2); // the retry's guard failed: the first try had been applied
    expect(row?.status).toBe('completed');
  });

  it('a guard that fails for another reason (cancelled meanwhile) is still a refusal', async () => {
    const { store, set } = flakyStore(1);
    const patient = patientTaskStore(store, { log, giveUp: () => false, sleep: noWait });
    set({ status: 'cancelled', leaseOwner: null } as unknown as TaskPatch);
    expect(await patient.updateIf('t1', { statusIn: ['processing'], leaseOwner: 'w1' }, completing)).toBeUndefined();
  });

  it("a shutdown ends the wait with the error; an error that is not the database's is thrown at once", async () => {
    const { store } = flakyStore(100);
    const patient = patientTaskStore(store, { log, giveUp: () => true, sleep: noWait });
    await expect(patient.updateIf('t1', { statusIn: ['processing'] }, completing)).rejects.toThrow(/Connection terminated/);
    const broken = {
      updateIf: async () => {
        throw new TypeError('a bug');
      },
    } as unknown as TaskStore;
    await expect(
      patientTaskStore(broken, { log, giveUp: () => false, sleep: noWait }).updateIf('t1', { statusIn: ['processing'] }, completing),
    ).rejects.toThrow(TypeError);
  });
});

describe('storing a finished result while the bucket cannot be reached (G261)', () => {
  const output: ProviderOutput = { files: [{ name: 'image.png', contentType: 'image/png', data: Buffer.from('png') }] };
  const stored = { result: { files: [] }, discard: async () => undefined } as unknown as StoredOutput;
  const outage = (): S3StorageError => new S3StorageError('upload', 's3://b/results/t1/image.png', 'Error', undefined, 'connect ECONNREFUSED 127.0.0.1:9');

  it('uploads the same output again until the storage takes it', async () => {
    const seen: ProviderOutput[] = [];
    let tries = 0;
    const results = {
      store: async (_id: string, out: ProviderOutput) => {
        seen.push(out);
        if (++tries < 3) throw outage();
        return stored;
      },
    };
    expect(await storeResultPatiently(results, 't1', output, new AbortController().signal, log)).toBe(stored);
    expect(seen).toEqual([output, output, output]);
  });

  it('a stop (shutdown, cancel, lost lease) ends the wait; a refusal that is not an outage is thrown at once', async () => {
    const controller = new AbortController();
    const results = {
      store: async () => {
        setTimeout(() => controller.abort('shutdown'), 10);
        throw outage();
      },
    };
    await expect(storeResultPatiently(results, 't1', output, controller.signal, log)).rejects.toBeInstanceOf(S3StorageError);
    let tries = 0;
    const denied = {
      store: async () => {
        tries++;
        throw new S3StorageError('upload', 's3://b/k', 'AccessDenied', 403, '');
      },
    };
    await expect(storeResultPatiently(denied, 't1', output, new AbortController().signal, log)).rejects.toThrow(/AccessDenied/);
    expect(tries).toBe(1);
  });
});
