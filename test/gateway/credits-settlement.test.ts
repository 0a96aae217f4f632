/**
 * Settlement cases the engine tests do not reach (G201-G204, G249), through the gateway on SQLite
 * and (postgres-e2e) PostgreSQL: a per-second model that produced less than it was asked for is
 * captured for what it produced; a task that no worker started within the queue TTL fails with
 * its hold released, once; an operator's price is what is held and captured while the reply's
 * `amount` stays the contract's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { hashApiKey } from '../../src/auth/keys.js';
import { createSandboxProvider } from '../../src/providers/sandbox/index.js';
import type { MediaProvider } from '../../src/providers/types.js';
import { loadConfig } from '../../src/config.js';
import { mediaRefs } from '../../src/contract/media-refs.js';
import { createGateway } from '../../src/main/gateway.js';
import type { LedgerEntry, NewTask } from '../../src/store/types.js';
import { expireQueuedTasks, queueExpiredError } from '../../src/tasks/queue-ttl.js';
import { claimNextTask } from '../../src/tasks/states.js';
import { configFiles } from '../helpers/config-files.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { tempDir } from '../helpers/temp-root.js';
import { waitFor } from '../helpers/wait-for.js';
import { body } from '../helpers/json.js';
import { insertTasks } from '../helpers/task-rows.js';
import { openMemoryStore } from '../helpers/migrated-store.js';

const C = 1_000_000;
const HOUR = 3_600_000;
const json = { 'content-type': 'application/json' };
const files = configFiles('mediagate-credits-settlement-');
const silent = pino({ level: 'silent' });

const accountOf = async (h: Harness, key = h.key): Promise<string> => (await h.store.keys.findActiveByHash(hashApiKey(key)))!.accountId;

/** The ledger entries of one task, in order. */
const entriesOf = async (h: Harness, account: string, taskId: string): Promise<LedgerEntry[]> =>
  (await h.store.credits.ledger(account)).filter((e) => e.taskId === taskId);

/** The sandbox, except that every video it makes is 2 s long, whatever was asked (an upstream that stopped early). */
function shortVideos(): MediaProvider {
  const sandbox = createSandboxProvider({ timing: 'instant' });
  return {
    ...sandbox,
    start: (job, ctx) => sandbox.start(job.output.kind === 'video' ? { ...job, output: { ...job.output, durationSec: 2 } } : job, ctx),
  };
}

describe('per-second settlement through the gateway', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness({ providers: [shortVideos()], env: { MEDIAGATE_CREDITS: 'on' } });
  });
  afterAll(async () => {
    await h.close();
  });

  it('a 1.5 pro task asked for 6 s that produced 2 s holds 6 credits and captures 2', async () => {
    const account = await accountOf(h);
    await h.store.credits.grant(account, 10 * C, 'per-second test', Date.now());
    const res = await h.app.inject({
      method: 'POST',
      url: '/v1/motion/videos',
      headers: { ...h.auth(), ...json },
      payload: JSON.stringify({ model: 'motion_1_5_pro_480p', content: [{ type: 'text', text: 'a short fox' }], duration: 6 }),
    });
    expect(res.statusCode, res.body).toBe(200);
    const id = body(res).id as string;
    const task = await h.waitForTask(id, ['completed', 'failed'], 30_000);
    expect(task.status, task.error ?? '').toBe('completed');
    expect(task.result?.actualDuration).toBe(2);
    expect((await entriesOf(h, account, id)).map((e) => [e.kind, e.amountMicro])).toEqual([
      ['hold', 6 * C],
      ['capture', 2 * C],
    ]);
    expect(await h.store.credits.getAccount(account)).toMatchObject({ availableMicro: 8 * C, heldMicro: 0, spentMicro: 2 * C });
    expect(await h.store.credits.reconcile()).toMatchObject({ mismatched: [], unsettled: [], doubled: [], open: 0 });
  });
});

describe('the queue TTL (MEDIAGATE_QUEUE_TTL_HOURS) and an operator price', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness({
      workers: false,
      env: { MEDIAGATE_CREDITS: 'on', MEDIAGATE_QUEUE_TTL_HOURS: '2', MEDIAGATE_PRICES: files.file({ models: { 'sd_2.0_fast_discount': 3 } }) },
    });
  });
  afterAll(async () => {
    await h.close();
  });

  const modelCenter = (prompt: string) =>
    h.app.inject({
      method: 'POST',
      url: '/v2/model-center/tasks',
      headers: { ...h.auth(), ...json },
      payload: JSON.stringify({ model: 'sd_2.0_fast_discount', prompt, duration: 4, resolution: '480p', generate_audio: false }),
    });

  it("holds the operator's price, which the reply's amount says (credits consumed, G450)", async () => {
    const account = await accountOf(h);
    await h.store.credits.grant(account, 3 * C, 'one task at the operator price', Date.now());
    const res = await modelCenter('priced');
    expect(res.statusCode, res.body).toBe(200);
    const created = body(res);
    expect(created.amount).toBe(3); // the contract's price is 10
    const query = await h.app.inject({ method: 'GET', url: `/v2/model-center/tasks/${created.id as string}`, headers: h.auth() });
    expect(body(query).amount).toBe(3);
    expect((await entriesOf(h, account, created.id as string)).map((e) => [e.kind, e.amountMicro])).toEqual([['hold', 3 * C]]);
    // 3 credits were all there was: the next one is refused, naming the operator's price
    const refused = await modelCenter('over');
    expect(refused.statusCode).toBe(402);
    expect(refused.body).toMatch(/costs 3 credits and the account has 0 available/);
  });

  it('fails the tasks still queued after the TTL once, releasing their holds; a task a worker took first is left to run', async () => {
    const account = await accountOf(h, h.otherKey);
    await h.store.credits.grant(account, 20 * C, 'queue TTL test', Date.now());
    const submit = async (prompt: string): Promise<string> => {
      const res = await h.app.inject({ method: 'POST', url: '/v1/pic/images', headers: h.auth(h.otherKey), payload: { model: 'pic', prompt } });
      expect(res.statusCode, res.body).toBe(200);
      return body(res).id as string;
    };
    const waiting = await submit('waits too long');
    const started = await submit('started in time');
    // a worker of the test's own takes one of the two (tasks queued earlier by the other key may come first)
    let claimed: string | undefined;
    while (claimed !== waiting && claimed !== started) {
      claimed = (await claimNextTask(h.store.tasks, ['sandbox'], 'w-test', 60_000))?.id;
      expect(claimed).toBeDefined();
    }
    const [expiring, running] = claimed === waiting ? [started, waiting] : [waiting, started];
    await new Promise((r) => setTimeout(r, 5)); // a later millisecond than the two above
    const fresh = await submit('submitted just now');
    const submittedAt = (await h.store.tasks.get(expiring))!.createdAt;

    // an hour after the submits nothing is due; once the TTL has passed for the first two, they
    // (and whatever else was queued before them) fail, the task submitted after them does not
    expect(await expireQueuedTasks(h.store.tasks, silent, 2, 24, submittedAt + HOUR)).toBe(0);
    const later = Math.max(submittedAt, (await h.store.tasks.get(running))!.createdAt) + 2 * HOUR + 1;
    const queuedBefore = (await h.store.tasks.listQueuedBefore(later - 2 * HOUR, 100)).map((t) => t.id);
    expect(queuedBefore).toContain(expiring);
    expect(queuedBefore).not.toContain(running);
    expect(queuedBefore).not.toContain(fresh);
    expect(await expireQueuedTasks(h.store.tasks, silent, 2, 24, later)).toBe(queuedBefore.length);
    expect(await expireQueuedTasks(h.store.tasks, silent, 2, 24, later)).toBe(0); // once

    const reply = body(await h.app.inject({ method: 'GET', url: `/v1/result/${expiring}`, headers: h.auth(h.otherKey) }));
    expect(reply).toMatchObject({ id: expiring, status: 'failed', error: queueExpiredError(2) });
    expect((await h.store.tasks.get(running))?.status).toBe('processing');
    expect((await h.store.tasks.get(fresh))?.status).toBe('queued');
    expect((await entriesOf(h, account, expiring)).map((e) => e.kind)).toEqual(['hold', 'release']);
    expect((await entriesOf(h, account, running)).map((e) => e.kind)).toEqual(['hold']);
    const report = await h.store.credits.reconcile();
    expect(report).toMatchObject({ mismatched: [], unsettled: [], doubled: [] });
  });

  it('0 turns the TTL off', async () => {
    expect(await expireQueuedTasks(h.store.tasks, silent, 0, 24, Date.now() + 1000 * HOUR)).toBe(0);
  });
});

describe('the queue TTL in a started gateway', () => {
  it('the retention sweeper of a gateway started with MEDIAGATE_QUEUE_TTL_HOURS=2 fails a task queued 3 h ago, not one queued now', async () => {
    const store = openMemoryStore();
    const task = (id: string, createdAt: number): NewTask => ({
      id,
      ownerKeyId: 'key_ttl',
      family: 'pic',
      form: null,
      model: 'pic',
      provider: 'sandbox',
      request: { params: { prompt: 'x' }, output: { kind: 'image', width: 8, height: 8, format: 'png' }, media: mediaRefs() },
      amount: 1,
      createdAt,
    });
    await insertTasks(store.tasks, [task('task_ttl_old', Date.now() - 3 * HOUR), task('task_ttl_new', Date.now())]);
    const gateway = await createGateway(
      loadConfig({
        MEDIAGATE_DATA_DIR: tempDir(),
        MEDIAGATE_LOG_LEVEL: 'silent',
        MEDIAGATE_WORKERS: '0',
        MEDIAGATE_MIN_FREE_DISK_MB: '0',
        MEDIAGATE_QUEUE_TTL_HOURS: '2',
      }),
      { store },
    );
    try {
      gateway.startBackground();
      const old = await waitFor(
        async () => {
          const t = await store.tasks.get('task_ttl_old');
          return t?.status === 'failed' ? t : undefined;
        },
        10_000,
        'the sweep',
      );
      expect(old.error).toBe(queueExpiredError(2));
      expect((await store.tasks.get('task_ttl_new'))?.status).toBe('queued');
    } finally {
      await gateway.close(0);
    }
  });
});
