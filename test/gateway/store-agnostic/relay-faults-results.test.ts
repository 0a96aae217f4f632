/**
 * Result files that cannot be had (issue 13, G88, G96): the upstream says a task is
 * completed, but its result URL answers 404 (the file is gone: a new generation, then the task
 * fails saying so), 500 once (fetched again at the next check: completed), or 200 with something
 * that is not the file (the task fails at once). pic, motion, videos and Model Center through a
 * relaying mediagate and the fault proxy; every generation is one upstream task; nothing a caller
 * sees names the upstream.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { missingResult } from '../../helpers/fault-proxy-results.js';
import type { FaultRule, RewriteContext } from '../../helpers/fault-proxy.js';
import type { RelayPair } from '../../helpers/relay-pair.js';
import {
  ANY_QUERY,
  expectCompleted,
  settleAll,
  startFaultPair,
  submit,
  upstreamTaskCount,
  upstreamTasksOf,
  type FamilyName,
} from '../../helpers/relay-faults.js';

let pair: RelayPair;
// two generations at most: a task whose file is gone twice fails
beforeAll(async () => {
  pair = await startFaultPair({ relaying: { env: { MEDIAGATE_MAX_ATTEMPTS: '2' } } });
}, 60_000);
afterAll(async () => {
  await pair?.close();
});

let rule: FaultRule | undefined;
afterEach(() => rule?.remove());

async function run(families: FamilyName[], text: string) {
  const before = await upstreamTaskCount(pair);
  const ids = await Promise.all(families.map((family) => submit(pair, family, text)));
  return settleAll(pair, ids, before);
}

/** A result URL on the proxy answering `status`, named for the upstream task of the query (`/.../<upstream id>`). */
const goneFor = (status: number) => (ctx: RewriteContext) => pair.proxy.goneUrl(status, ctx.url.split('/').at(-1));

/** The result downloads the proxy saw for a task (its files, its `goneFor` URLs), in order: [what it did, the status the relay got]. */
function downloadsOf(id: string): Array<[string, number | undefined]> {
  const upstreamIds = upstreamTasksOf(pair, id);
  return pair.proxy.requests
    .filter((r) => r.method === 'GET' && upstreamIds.some((u) => r.url.startsWith(`/files/${u}/`) || (r.action === 'gone' && r.url.endsWith(`/${u}`))))
    .map((r) => [r.action, r.status]);
}

describe('a completed upstream task whose result file', () => {
  it('is missing (404): a new generation, whose file is missing too; then the task fails saying so', async () => {
    rule = pair.proxy.addRule({ match: { method: 'GET', path: ANY_QUERY }, fault: missingResult(goneFor(404)) });
    for (const task of await run(['pic', 'motion', 'videos', 'model-center'], 'the file is gone')) {
      expect(task.status, task.family).toBe('failed');
      expect(task.error, task.family).toMatch(/the upstream no longer has the result file \(HTTP 404\)$/);
      // two generations (<id>, <id>.1), each one task the upstream made and completed
      expect([task.attempts, task.upstream!.generation], task.family).toEqual([2, 1]);
      const upstreamIds = upstreamTasksOf(pair, task.id);
      expect(
        (await Promise.all(upstreamIds.map((u) => pair.upstream.store.tasks.get(u)))).map((t) => t!.status),
        task.family,
      ).toEqual(['completed', 'completed']);
      // one download of each generation's file, each missing
      expect(downloadsOf(task.id), task.family).toEqual([
        ['gone', 404],
        ['gone', 404],
      ]);
    }
  });

  it('answers 500 once: fetched again at a later check; completed with one generation', async () => {
    rule = pair.proxy.addRule({ match: { method: 'GET', path: ANY_QUERY }, fault: missingResult(goneFor(500), { firstOnly: true }) });
    const tasks = await run(['pic', 'videos', 'model-center'], 'the file answers 500 once');
    expectCompleted(pair, tasks);
    for (const task of tasks) {
      expect([task.attempts, task.upstream!.generation], task.family).toEqual([1, 0]);
      expect(downloadsOf(task.id), task.family).toEqual([
        ['gone', 500],
        ['forwarded', 200],
      ]);
    }
  });

  it('is not what was asked (200, a JSON body): the task fails at once, naming what it should have been', async () => {
    rule = pair.proxy.addRule({ match: { method: 'GET', path: ANY_QUERY }, fault: missingResult(goneFor(200)) });
    const tasks = await run(['pic', 'motion', 'model-center'], 'the file is not one');
    const expected: Record<string, string> = { pic: 'an image', motion: 'a video', 'model-center': 'an image' };
    for (const task of tasks) {
      expect(task.status, task.family).toBe('failed');
      expect(task.error).toBe(`the upstream's result is not ${expected[task.family]} (its first bytes say otherwise)`);
      expect([task.attempts, task.upstream!.generation], task.family).toEqual([1, 0]);
      expect(downloadsOf(task.id), task.family).toEqual([['gone', 200]]);
    }
  });
});
