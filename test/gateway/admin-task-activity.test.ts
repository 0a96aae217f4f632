/**
 * `GET /admin/v1/task-activity` through HTTP (G370): tasks per minute by status. Submits are counted
 * in the minute of their creation (a past window with exact edges, times given to the store);
 * each status a task entered is counted in the minute of its `task_events` row, equal to the rows
 * the store keeps; every minute of the window is listed; bad input is a 400 naming the field.
 * Runs on SQLite and (postgres-e2e) on PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimNextTask, completeTask, failTask, requeueTask } from '../../src/tasks/states.js';
import { adminOptions, withAdmin, type AdminHarness } from '../helpers/admin.js';
import { newTask } from '../cases/store-contract.case.js';
import { createHarness } from '../helpers/harness.js';
import { insertTask } from '../helpers/task-rows.js';

const MINUTE = 60_000;
/** A whole minute well in the past. */
const T0 = 28_333_334 * MINUTE;
const COUNTS = ['submitted', 'queued', 'processing', 'completed', 'failed', 'cancelled'] as const;
type Row = Record<(typeof COUNTS)[number] | 'minute', number>;

let h: AdminHarness;
beforeAll(async () => {
  h = withAdmin(await createHarness(adminOptions()));
});
afterAll(async () => {
  await h.close();
});

describe('tasks per minute by status', () => {
  it('counts the submits of each minute of a past window, every minute listed, the end exclusive', async () => {
    for (const at of [T0 - 1, T0, T0 + MINUTE - 1, T0 + MINUTE + 5, T0 + 4 * MINUTE + 1, T0 + 5 * MINUTE]) {
      // a provider of their own: the next test's claims take only the tasks it submits
      await insertTask(h.store.tasks, newTask({ createdAt: at, provider: 'past-window' }));
    }
    const res = await h.admin('GET', `/admin/v1/task-activity?minutes=5&to=${(T0 + 5 * MINUTE) / 1000}`);
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    expect(res.json).toMatchObject({ object: 'task_activity', interval: 'minute', from: T0 / 1000, to: (T0 + 5 * MINUTE) / 1000 });
    const data = res.json.data as Row[];
    expect(data.map((r) => r.minute)).toEqual([0, 1, 2, 3, 4].map((i) => (T0 + i * MINUTE) / 1000));
    expect(data.map((r) => r.submitted)).toEqual([2, 1, 0, 0, 1]);
    for (const r of data) for (const c of COUNTS.slice(1)) expect(r[c], `${c} at ${r.minute}`).toBe(0);
    // `to` is rounded up to a whole minute: half a minute before the end answers the same window
    const rounded = await h.admin('GET', `/admin/v1/task-activity?minutes=5&to=${new Date(T0 + 5 * MINUTE - 30_000).toISOString()}`);
    expect(rounded.json).toEqual(res.json);
    // a window of one minute, the last one
    expect((await h.admin('GET', `/admin/v1/task-activity?minutes=1&to=${(T0 + 5 * MINUTE) / 1000}`)).json.data.map((r: Row) => r.submitted)).toEqual([1]);
  });

  it("counts each status a task entered in the minute of that change, as the store's task_events rows; the last hour by default", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await h.app.inject({ method: 'POST', url: '/v1/pic/images', headers: h.auth(), payload: { model: 'pic', prompt: `minute ${i}` } });
      expect(res.statusCode, res.body).toBe(200);
      ids.push(res.json().id as string);
    }
    const claimed = [];
    for (let i = 0; i < 3; i++) claimed.push((await claimNextTask(h.store.tasks, ['sandbox'], 'w-activity', 60_000))!);
    expect(claimed.map((t) => t.id).sort()).toEqual(ids.slice(0, 3).sort());
    expect(await completeTask(h.store.tasks, claimed[0]!, 'w-activity', { files: [] }, Date.now() + 3_600_000)).toBeDefined();
    expect(await failTask(h.store.tasks, claimed[1]!, 'w-activity', 'the upstream refused it', null)).toBeDefined();
    expect(await requeueTask(h.store.tasks, claimed[2]!, 'w-activity', Date.now() + 60_000, { error: 'try again' })).toBeDefined();
    expect((await h.admin('POST', `/admin/v1/tasks/${ids[3]}/cancel`)).status).toBe(200);

    const res = await h.admin('GET', '/admin/v1/task-activity');
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    const data = res.json.data as Row[];
    expect(data).toHaveLength(60);
    expect(res.json.to - res.json.from).toBe(3600);
    for (let i = 1; i < data.length; i++) expect(data[i]!.minute - data[i - 1]!.minute).toBe(60);
    // what the store recorded, counted per minute here
    const expected = new Map<number, Row>();
    const count = (at: number, what: (typeof COUNTS)[number]): void => {
      const minute = (Math.floor(at / MINUTE) * MINUTE) / 1000;
      const row = expected.get(minute) ?? (Object.fromEntries([['minute', minute], ...COUNTS.map((c) => [c, 0])]) as Row);
      row[what]++;
      expected.set(minute, row);
    };
    for (const id of ids) {
      count((await h.store.tasks.get(id))!.createdAt, 'submitted');
      for (const e of await h.store.admin.taskEvents(id)) count(e.at, e.status);
    }
    const busy = data.filter((r) => COUNTS.some((c) => r[c] > 0));
    expect(busy).toEqual([...expected.values()].sort((a, b) => a.minute - b.minute));
    const total = (c: (typeof COUNTS)[number]): number => data.reduce((n, r) => n + r[c], 0);
    expect(COUNTS.map(total)).toEqual([4, 1, 3, 1, 1, 1]);
  });

  it.each([
    ['minutes=0', 'minutes'],
    ['minutes=1441', 'minutes'],
    ['minutes=ten', 'minutes'],
    ['minutes=1.5', 'minutes'],
    ['to=soon', 'to'],
    ['interval=hour', 'interval'],
  ])('?%s is a 400 naming %s', async (query, param) => {
    const res = await h.admin('GET', `/admin/v1/task-activity?${query}`);
    expect([res.status, res.json.error?.param]).toEqual([400, param]);
  });
});
