import { describe, expect, it } from 'vitest';
import { mediaRefs } from '../contract/media-refs.js';
import { createLogger } from '../logger.js';
import { ProviderRegistry } from '../providers/registry.js';
import { ChannelError, type CallbackCheck, type Provider } from '../providers/types.js';
import { openSqliteStore } from '../store/sqlite/open.js';
import { CallbackReceiver, callbackUrlOf } from './callbacks.js';
import { saveUpstreamRef } from './states.js';
import { insertTask } from '../../test/helpers/task-rows.js';

// What a verified (or refused) provider callback does to tasks, without HTTP (G158).
const HOUR = 3_600_000;
let n = 0;

function setup(options: { maxWaiting?: number } = {}) {
  const store = openSqliteStore(':memory:');
  let check: CallbackCheck | Error = { valid: false, kind: 'forged', message: 'unset' };
  const provider: Provider = {
    id: 'up',
    capabilities: { families: ['pic'] },
    start: async () => {
      throw new Error('not started here');
    },
    callbacks: {
      verify: async () => {
        if (check instanceof Error) throw check;
        return check;
      },
    },
  };
  const plain: Provider = {
    id: 'plain',
    capabilities: { families: ['pic'] },
    start: async () => {
      throw new Error('no');
    },
  };
  let wakes = 0;
  const receiver = new CallbackReceiver({
    store: store.tasks,
    providers: new ProviderRegistry([provider, plain]),
    log: createLogger('silent'),
    wake: () => {
      wakes++;
    },
    retryMs: 5,
    waitMs: 5000,
    ...options,
  });
  /** A task whose generation `upstreamId` runs at the upstream: leased by `w1` (its start) until `release`d, then waiting an hour for its check. */
  const started = async (upstreamId: string) => {
    const id = `task_cb_${++n}`;
    await insertTask(store.tasks, {
      id,
      ownerKeyId: 'k',
      family: 'pic',
      form: null,
      model: 'pic',
      provider: 'up',
      request: { params: { prompt: 'x' }, output: { kind: 'image', width: 8, height: 8, format: 'png' }, media: mediaRefs() },
      amount: 1,
      createdAt: Date.now(),
    });
    const claimed = (await store.tasks.claimNext(['up'], 'w1', Date.now(), Date.now() + 60_000))!;
    return {
      id,
      release: async () =>
        (await saveUpstreamRef(
          store.tasks,
          claimed,
          'w1',
          { generation: 0, provider: 'up', ref: { id: upstreamId }, startedAt: Date.now(), checkFailures: 0 },
          Date.now() + HOUR,
        ))!,
    };
  };
  const deliver = (taskId: string, c: CallbackCheck | Error, providerId = 'up') => {
    check = c;
    return receiver.receive(providerId, taskId, { headers: {}, body: Buffer.from('{}') });
  };
  const valid = (upstreamId: string, deliveryId = `d${++n}`): CallbackCheck => ({ valid: true, upstreamId, deliveryId });
  return { store, receiver, started, deliver, valid, wakes: () => wakes };
}

describe('provider callbacks: what a verified notice does', () => {
  it('brings the check of a waiting generation forward to now and wakes the worker; the same delivery again changes nothing', async () => {
    const t = setup();
    const task = await t.started('pred_1');
    const waiting = await task.release();
    expect(waiting.runAfter).toBeGreaterThan(Date.now() + HOUR - 60_000);
    const delivery = t.valid('pred_1', 'msg_1');
    expect(await t.deliver(task.id, delivery)).toBe('check_sooner');
    const sooner = (await t.store.tasks.get(task.id))!;
    expect(sooner.runAfter).toBeLessThanOrEqual(Date.now());
    expect(t.wakes()).toBe(1);
    // the check ran and scheduled the next one an hour away: a replay must not bring it forward
    await t.store.tasks.updateIf(task.id, { statusIn: ['processing'] }, { runAfter: Date.now() + HOUR });
    const later = (await t.store.tasks.get(task.id))!.runAfter;
    expect(await t.deliver(task.id, delivery)).toBe('duplicate');
    expect((await t.store.tasks.get(task.id))!.runAfter).toBe(later);
    expect(t.wakes()).toBe(1);
    t.receiver.close();
  });

  it("about another generation, another provider's, an unknown or a finished task: nothing changes", async () => {
    const t = setup();
    const task = await t.started('pred_2');
    const before = await task.release();
    expect(await t.deliver(task.id, t.valid('pred_other'))).toBe('not_waiting');
    expect(await t.deliver('task_nope', t.valid('pred_2'))).toBe('not_waiting');
    await t.store.tasks.updateIf(task.id, { statusIn: ['processing'] }, { status: 'completed', progress: 100, finishedAt: Date.now() });
    const finished = (await t.store.tasks.get(task.id))!;
    expect(await t.deliver(task.id, t.valid('pred_2'))).toBe('not_waiting');
    expect(await t.store.tasks.get(task.id)).toEqual(finished);
    expect(before.runAfter).toBe(finished.runAfter);
    expect(t.wakes()).toBe(0);
    t.receiver.close();
  });

  it('a task a worker holds (its start, or a check) is brought forward once the worker lets it go', async () => {
    const t = setup();
    const task = await t.started('pred_3');
    expect(await t.deliver(task.id, t.valid('pred_3'))).toBe('after_current_work');
    expect((await t.store.tasks.get(task.id))!.leaseOwner).toBe('w1');
    expect(t.wakes()).toBe(0);
    await task.release(); // the start saves its generation and waits an hour for the check
    const due = await new Promise<number>((resolve) => {
      const look = setInterval(async () => {
        const t1 = (await t.store.tasks.get(task.id))!;
        if (t1.runAfter <= Date.now()) {
          clearInterval(look);
          resolve(t1.runAfter);
        }
      }, 5);
    });
    expect(due).toBeLessThanOrEqual(Date.now());
    expect(t.wakes()).toBe(1);
    t.receiver.close();
  });

  it('past maxWaiting held tasks a notice is answered 429, and its repeat is taken again', async () => {
    const t = setup({ maxWaiting: 1 });
    const a = await t.started('pred_a');
    const b = await t.started('pred_b');
    expect(await t.deliver(a.id, t.valid('pred_a'))).toBe('after_current_work');
    const delivery = t.valid('pred_b', 'msg_b');
    await expect(t.deliver(b.id, delivery)).rejects.toMatchObject({ code: 'rate_limited', status: 429 });
    await expect(t.deliver(b.id, delivery)).rejects.toMatchObject({ code: 'rate_limited' });
    t.receiver.close();
  });
});

describe('provider callbacks: refused notices', () => {
  it('a header missing is a 400 naming it; a signature that does not hold or a stale time a 401; nothing changes', async () => {
    const t = setup();
    const task = await t.started('pred_4');
    const before = await task.release();
    await expect(t.deliver(task.id, { valid: false, kind: 'malformed', header: 'webhook-id', message: 'webhook-id: is required' })).rejects.toMatchObject({
      code: 'invalid_request',
      status: 400,
      param: 'webhook-id',
      message: 'webhook-id: is required',
    });
    await expect(t.deliver(task.id, { valid: false, kind: 'forged', header: 'webhook-signature', message: 'no' })).rejects.toMatchObject({
      code: 'invalid_callback_signature',
      status: 401,
    });
    await expect(t.deliver(task.id, { valid: false, kind: 'stale', header: 'webhook-timestamp', message: 'old' })).rejects.toMatchObject({
      code: 'invalid_callback_signature',
      status: 401,
    });
    expect(await t.store.tasks.get(task.id)).toEqual(before);
  });

  it('keys that cannot be had are a 503 with Retry-After (the upstream delivers again); a provider without callbacks a 404', async () => {
    const t = setup();
    await expect(t.deliver('task_x', new ChannelError('down'))).rejects.toMatchObject({
      code: 'upstream_unavailable',
      status: 503,
      headers: { 'retry-after': '30' },
    });
    await expect(t.deliver('task_x', new Error('a bug'))).rejects.toThrow('a bug');
    await expect(t.deliver('task_x', t.valid('p'), 'plain')).rejects.toMatchObject({ code: 'route_not_found', status: 404 });
    await expect(t.deliver('task_x', t.valid('p'), 'nobody')).rejects.toMatchObject({ code: 'route_not_found' });
  });

  it('callback URLs name the provider and the task, escaped', () => {
    expect(callbackUrlOf('https://media.example.com', 'fal:eu', 'task_Ab-1')).toBe('https://media.example.com/v1/provider-callbacks/fal%3Aeu/task_Ab-1');
  });
});
