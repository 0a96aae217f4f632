import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sweepExpiredResults } from '../src/tasks/retention.js';
import { createLogger } from '../src/logger.js';
import { createHarness, type Harness } from './helpers/harness.js';
import { body } from './helpers/json.js';

let h: Harness;
beforeAll(async () => { h = await createHarness(); });
afterAll(async () => { await h.close(); });

async function completedImageUrl(prompt = 'link test'): Promise<{ id: string; path: string }> {
  const created = await h.app.inject({ method: 'POST', url: '/v1/pic/images', headers: h.auth(), payload: { model: 'pic', prompt } });
  const id = body(created).id as string;
  await h.waitForTask(id, ['completed']);
  const q = body(await h.app.inject({ method: 'GET', url: `/v1/result/${id}`, headers: h.auth() }));
  return { id, path: String(q.image_url).replace(h.config.publicUrl, '') };
}

describe('result downloads', () => {
  it('serve the file to a signed URL without a bearer key', async () => {
    const { path } = await completedImageUrl();
    const res = await h.app.inject({ method: 'GET', url: path });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('image/png');
    expect(Number(res.headers['content-length'])).toBe(res.rawPayload.length);
    const head = await h.app.inject({ method: 'HEAD', url: path });
    expect(head.statusCode).toBe(200);
    expect(head.headers['content-length']).toBe(res.headers['content-length']);
  });

  it('refuse a tampered URL with 403 result_link_invalid', async () => {
    const { path } = await completedImageUrl();
    for (const bad of [path.replace(/sig=./, 'sig=Z'), path.replace(/exp=(\d+)/, (_m, e) => `exp=${Number(e) + 1}`), path.replace(/image\.([0-9a-f]+)\.png/, 'image.$1.jpg'), path.split('?')[0]!]) {
      const res = await h.app.inject({ method: 'GET', url: bad });
      expect(res.statusCode).toBe(403);
      expect(body(res).error.code).toBe('result_link_invalid');
    }
  });

  it('refuse an expired URL with 403 result_link_expired', async () => {
    const { id } = await completedImageUrl();
    const url = h.signer.signResultUrl(id, 'image.png', Date.now() - 1000).replace(h.config.publicUrl, '');
    const res = await h.app.inject({ method: 'GET', url });
    expect(res.statusCode).toBe(403);
    expect(body(res).error.code).toBe('result_link_expired');
  });

  it('expire with the family retention: 24 h after completion for pic (decisions.md #20)', async () => {
    const { id, path } = await completedImageUrl();
    const task = h.store.tasks.get(id)!;
    const exp = Number(new URL(`http://x${path}`).searchParams.get('exp'));
    expect(exp).toBe(Math.floor((task.finishedAt! + 24 * 3_600_000) / 1000));
    expect(task.expiresAt).toBe(task.finishedAt! + 24 * 3_600_000);
  });

  it('the retention sweeper deletes expired pic results but keeps the task', async () => {
    const { id, path } = await completedImageUrl('sweep me');
    const task = h.store.tasks.get(id)!;
    const swept = await sweepExpiredResults(h.store.tasks, h.blobs, createLogger('silent'), 24, task.expiresAt! + 1);
    expect(swept).toBeGreaterThanOrEqual(1);
    expect(h.store.tasks.get(id)?.status).toBe('completed');
    expect(h.store.tasks.get(id)?.expiresAt).toBeNull();
    const res = await h.app.inject({ method: 'GET', url: path });
    expect(res.statusCode).toBe(404);
    expect(body(res).error.code).toBe('result_not_found');
  });
});
