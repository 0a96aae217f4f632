/**
 * A provider declares what it can honour (Provider.refuse): at submit the candidates that cannot
 * are left out of the task's route; when none can, the caller gets a 400 naming the field; a
 * provider that stops honouring the request before the start fails the task with its reason.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { MediaProvider, Refusal, RequestedJob } from '../../src/providers/types.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { image } from '../helpers/media-fixtures.js';
import { countTasksByStatus } from '../helpers/task-rows.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A provider that makes a 16x16 PNG at once, refusing what `refuse` says. */
function provider(id: string, refuse: (job: RequestedJob) => Refusal | undefined): MediaProvider & { starts: string[] } {
  const starts: string[] = [];
  return {
    id,
    starts,
    capabilities: { families: ['pic'] },
    refuse,
    async start(job) {
      starts.push(job.taskId);
      return { state: 'done', output: { files: [{ name: 'out.png', contentType: 'image/png', data: await image(16, 16), width: 16, height: 16 }] } };
    },
  };
}

const noFourK = (job: RequestedJob): Refusal | undefined =>
  job.family === 'pic' && job.params.resolution === '4k' ? { field: 'resolution', message: `resolution 4k: ${job.upstreamModel} makes at most 2k` } : undefined;

async function harness(providers: MediaProvider[]): Promise<Harness> {
  const h = await createHarness({ providers, routes: { '*': providers.map((p) => ({ provider: p.id, priority: 0, weight: 1 })) } });
  cleanups.push(() => h.close());
  return h;
}

const submit = (h: Harness, resolution: string) =>
  h.app.inject({ method: 'POST', url: '/v1/pic/images', headers: h.auth(), payload: { model: 'pic', prompt: 'a fox', resolution } });

describe('what a provider cannot honour', () => {
  it('a candidate that cannot honour a field is left out; the task runs on one that can', async () => {
    const small = provider('small', noFourK);
    const big = provider('big', () => undefined);
    const h = await harness([small, big]);
    const res = await submit(h, '4k');
    expect(res.statusCode).toBe(200);
    const task = await h.waitForTask(res.json().id as string);
    expect(task.status).toBe('completed');
    expect(task.provider).toBe('big');
    expect(task.request.route?.map((c) => c.provider) ?? ['big']).toEqual(['big']);
    expect(small.starts).toEqual([]);
    expect(big.starts).toEqual([task.id]);
  });

  it('when no candidate can, the submit is a 400 naming the field and the rule, and nothing is stored', async () => {
    const h = await harness([provider('a', noFourK), provider('b', noFourK)]);
    const res = await submit(h, '4k');
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatchObject({ code: 'invalid_request', param: 'resolution', message: 'resolution: resolution 4k: pic makes at most 2k' });
    expect(await countTasksByStatus(h.store.tasks)).toEqual({ queued: 0, processing: 0, completed: 0, failed: 0, cancelled: 0 });
    expect((await submit(h, '2k')).statusCode).toBe(200);
  });

  it('a provider that stops honouring the request before the start fails the task with its reason, never silently', async () => {
    let asked = 0;
    const fickle = provider('fickle', () => (++asked > 1 ? { field: 'resolution', message: 'resolution 2k: no longer offered' } : undefined));
    const h = await harness([fickle]);
    const res = await submit(h, '2k');
    expect(res.statusCode).toBe(200);
    const task = await h.waitForTask(res.json().id as string);
    expect(task).toMatchObject({ status: 'failed', error: 'resolution: resolution 2k: no longer offered' });
    expect(fickle.starts).toEqual([]);
  });
});
