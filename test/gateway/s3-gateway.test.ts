/**
 * The gateway with its storage in an S3-compatible bucket (MEDIAGATE_S3_BUCKET, G170-G174), end to
 * end against a local s3rver: sandbox tasks complete with their results in the bucket and none on
 * the local disk, /files streams them from the bucket (ranges, HEAD), the redirect mode hands out
 * presigned URLs with the link's expiry, assets and caller media copies live in the bucket too,
 * retention deletes from it, and /readyz asks it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { sweepExpiredResults } from '../../src/tasks/retention.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { waitFor } from '../helpers/wait-for.js';
import { body } from '../helpers/json.js';
import { image } from '../helpers/media-fixtures.js';
import { probeVideo } from '../helpers/probe-video.js';
import { type S3Server, startS3Server, useS3Credentials } from '../helpers/s3-server.js';

useS3Credentials();
let s3: S3Server;
let h: Harness;
beforeAll(async () => {
  s3 = await startS3Server();
  h = await createHarness({ env: s3.env({ MEDIAGATE_S3_PREFIX: 'e2e' }) });
}, 60_000);
afterAll(async () => {
  await h?.close();
  await s3?.close();
});

const log = createLogger('silent');
const local = (hh: Harness, url: string): string => url.replace(hh.config.publicUrl, '');

/** Creates a task, waits for it to complete and answers its id, result URL (gateway-local) and stored file name. */
async function completedTask(hh: Harness, url: string, payload: Record<string, unknown>): Promise<{ id: string; link: string; name: string }> {
  const created = await hh.app.inject({ method: 'POST', url, headers: hh.auth(), payload });
  expect(created.statusCode, created.body).toBe(200);
  const id = (body(created).id ?? body(created).data?.projectId) as string;
  const task = await hh.waitForTask(id, ['completed', 'failed'], 60_000);
  expect(task.error).toBeNull();
  const q = body(await hh.app.inject({ method: 'GET', url: `/v1/result/${id}`, headers: hh.auth() }));
  const link = local(hh, String(q.image_url ?? q.video_url));
  return { id, link, name: decodeURIComponent(link.split('?')[0]!.split('/').pop()!) };
}

/** The storage folders the data directory would hold without a bucket. */
const LOCAL_AREAS = ['results', 'inputs', 'assets'];

async function uploadAsset(hh: Harness, data: Buffer): Promise<string> {
  const boundary = '----mgs3';
  const payload = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="x.png"\r\nContent-Type: image/png\r\n\r\n`),
    data,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  const res = await hh.app.inject({
    method: 'POST',
    url: '/v2/model-center/assets',
    headers: { ...hh.auth(), 'content-type': `multipart/form-data; boundary=${boundary}` },
    payload,
  });
  expect(res.json()).toMatchObject({ status: 'approved' });
  return res.json().id as string;
}

describe('results in the bucket', () => {
  it('an image task completes with its result in the bucket, streamed by /files with Range and HEAD', async () => {
    const { id, link, name } = await completedTask(h, '/v1/pic/images', { model: 'pic', prompt: 'a bucket' });
    const key = `e2e/results/${id}/${name}`;
    expect(await s3.keys(`e2e/results/${id}/`)).toEqual([key]);
    const stored = await s3.object(key);

    const whole = await h.app.inject({ method: 'GET', url: link });
    expect(whole.statusCode).toBe(200);
    expect(whole.headers['content-type']).toBe('image/png');
    expect(whole.headers['content-length']).toBe(String(stored.length));
    expect(whole.headers.etag).toMatch(/^"[0-9a-f]+-[0-9a-f]+"$/);
    expect(whole.rawPayload.equals(stored)).toBe(true);

    const part = await h.app.inject({ method: 'GET', url: link, headers: { range: 'bytes=-100', 'if-range': String(whole.headers.etag) } });
    expect(part.statusCode).toBe(206);
    expect(part.headers['content-range']).toBe(`bytes ${stored.length - 100}-${stored.length - 1}/${stored.length}`);
    expect(part.rawPayload.equals(stored.subarray(stored.length - 100))).toBe(true);
    const beyond = await h.app.inject({ method: 'GET', url: link, headers: { range: `bytes=${stored.length}-` } });
    expect(beyond.statusCode).toBe(416);
    expect(beyond.headers['content-range']).toBe(`bytes */${stored.length}`);
    expect((await h.app.inject({ method: 'GET', url: link, headers: { 'if-none-match': String(whole.headers.etag) } })).statusCode).toBe(304);

    const head = await h.app.inject({ method: 'HEAD', url: link });
    expect(head.statusCode).toBe(200);
    expect(head.headers['content-length']).toBe(String(stored.length));
    expect(head.rawPayload.length).toBe(0);

    for (const area of LOCAL_AREAS) expect(fs.existsSync(path.join(h.dataDir, area)), area).toBe(false);
    expect(fs.readdirSync(h.tmpDir).filter((n) => n.startsWith(id))).toEqual([]);
  });

  it('a video task completes with a playable MP4 in the bucket', async () => {
    const { id, link, name } = await completedTask(h, '/v1/videos/videos', { model: 'videos_fast', prompt: 'a red fox', duration: '4', ratio: '9:16' });
    const stored = await s3.object(`e2e/results/${id}/${name}`);
    const res = await h.app.inject({ method: 'GET', url: link });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('video/mp4');
    expect(res.rawPayload.equals(stored)).toBe(true);
    const file = path.join(h.dataDir, 'check.mp4');
    fs.writeFileSync(file, res.rawPayload);
    expect(probeVideo(file)).toMatchObject({ codec: 'h264', width: 720, height: 1280, frames: 4 * 24 });
    fs.rmSync(file);
    for (const area of LOCAL_AREAS) expect(fs.existsSync(path.join(h.dataDir, area)), area).toBe(false);
  }, 90_000);

  it('an uploaded asset is kept in the bucket; a task using it reads its copy from there, which goes when the task finishes', async () => {
    const assetId = await uploadAsset(h, await image(1024, 1024));
    expect(await s3.keys(`e2e/assets/${assetId}/`)).toEqual([`e2e/assets/${assetId}/asset.png`]);
    const { id } = await completedTask(h, '/v1/pic/images', { model: 'pic', prompt: 'with a reference', image_urls: [`assetId://${assetId}`] });
    // the worker removes the task's copies once it has finished it (just after the state change)
    await waitFor(async () => ((await s3.keys(`e2e/inputs/${id}/`)).length === 0 ? true : undefined), 10_000, "the task's input copies to go");
    expect(await s3.keys(`e2e/assets/${assetId}/`)).toEqual([`e2e/assets/${assetId}/asset.png`]);
    const removed = await h.app.inject({ method: 'DELETE', url: `/v2/model-center/assets/${assetId}`, headers: h.auth() });
    expect(removed.statusCode).toBe(200);
    expect(await s3.keys(`e2e/assets/${assetId}/`)).toEqual([]);
    for (const area of LOCAL_AREAS) expect(fs.existsSync(path.join(h.dataDir, area)), area).toBe(false);
  });

  it('retention deletes the expired results from the bucket; the link then answers 404', async () => {
    const { id, link } = await completedTask(h, '/v1/pic/images', { model: 'pic', prompt: 'expiring' });
    const task = (await h.store.tasks.get(id))!;
    expect(await s3.keys(`e2e/results/${id}/`)).toHaveLength(1);
    await sweepExpiredResults(h.store.tasks, h.blobs, log, 24, task.expiresAt! - 1); // earlier tasks' retention ends, not this one's
    expect(await s3.keys(`e2e/results/${id}/`)).toHaveLength(1);
    expect(await sweepExpiredResults(h.store.tasks, h.blobs, log, 24, task.expiresAt! + 1)).toBeGreaterThanOrEqual(1);
    expect(await s3.keys(`e2e/results/${id}/`)).toEqual([]);
    const gone = await h.app.inject({ method: 'GET', url: link });
    expect(gone.statusCode).toBe(404);
    expect(body(gone).error.code).toBe('result_not_found');
  });

  it('/readyz answers 200 while the bucket answers', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/readyz' });
    expect(res.statusCode, res.body).toBe(200);
  });
});

describe('redirect mode (MEDIAGATE_FILES_REDIRECT=1)', () => {
  let r: Harness;
  beforeAll(async () => {
    r = await createHarness({ env: s3.env({ MEDIAGATE_S3_PREFIX: 'redirect', MEDIAGATE_FILES_REDIRECT: '1' }) });
  }, 60_000);
  afterAll(async () => {
    await r?.close();
  });

  it('a GET of a signed link is a 302 to a presigned bucket URL with the same expiry; HEAD is answered here', async () => {
    const { id, link, name } = await completedTask(r, '/v1/pic/images', { model: 'pic', prompt: 'redirected' });
    const stored = await s3.object(`redirect/results/${id}/${name}`);
    const exp = Number(new URL(`http://x${link}`).searchParams.get('exp'));
    const before = Math.floor(Date.now() / 1000);
    const res = await r.app.inject({ method: 'GET', url: link });
    const after = Math.ceil(Date.now() / 1000);
    expect(res.statusCode).toBe(302);
    expect(res.headers['cache-control']).toBe('no-store');
    const location = new URL(String(res.headers.location));
    expect(`${location.origin}${location.pathname}`).toBe(`${s3.endpoint}/${s3.bucket}/redirect/results/${id}/${name}`);
    // the same expiry as the link: X-Amz-Date + X-Amz-Expires is the link's exp (within the second it was signed in)
    const expires = Number(location.searchParams.get('X-Amz-Expires'));
    expect(expires).toBeGreaterThanOrEqual(exp - after - 1);
    expect(expires).toBeLessThanOrEqual(exp - before);

    const got = await fetch(location);
    expect(got.status).toBe(200);
    expect(got.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await got.arrayBuffer()).equals(stored)).toBe(true);
    const part = await fetch(location, { headers: { range: 'bytes=0-15' } });
    expect(part.status).toBe(206);
    expect(Buffer.from(await part.arrayBuffer()).equals(stored.subarray(0, 16))).toBe(true);

    const head = await r.app.inject({ method: 'HEAD', url: link });
    expect(head.statusCode).toBe(200);
    expect(head.headers['content-length']).toBe(String(stored.length));
  });

  it('the link is still checked first, and a file gone is a 404 rather than a redirect', async () => {
    const { id, link, name } = await completedTask(r, '/v1/pic/images', { model: 'pic', prompt: 'checked' });
    const tampered = await r.app.inject({ method: 'GET', url: link.replace(/sig=(.)/, (_m, c: string) => `sig=${c === 'A' ? 'B' : 'A'}`) });
    expect(tampered.statusCode).toBe(403);
    expect(body(tampered).error.code).toBe('result_link_invalid');
    await r.blobs.remove(id, name);
    const gone = await r.app.inject({ method: 'GET', url: link });
    expect(gone.statusCode).toBe(404);
    expect(gone.headers.location).toBeUndefined();
  });

  it('caller media copies are streamed at /inputs from the bucket, never redirected', async () => {
    const api = await createHarness({ workers: false, env: s3.env({ MEDIAGATE_S3_PREFIX: 'redirect', MEDIAGATE_FILES_REDIRECT: '1' }) });
    try {
      const png = await image(1024, 1024);
      const assetId = await uploadAsset(api, png);
      const created = await api.app.inject({
        method: 'POST',
        url: '/v1/pic/images',
        headers: api.auth(),
        payload: { model: 'pic', prompt: 'x', image_urls: [`assetId://${assetId}`] },
      });
      const id = body(created).id as string;
      expect(await s3.keys(`redirect/inputs/${id}/`)).toEqual([`redirect/inputs/${id}/0-images`]);
      const url = local(api, api.signer.signInputUrl(id, '0-images', Date.now() + 60_000));
      const res = await api.app.inject({ method: 'GET', url });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('image/png');
      expect(res.rawPayload.equals(png)).toBe(true);
    } finally {
      await api.close();
    }
  });
});

describe('/readyz with a bucket that cannot be used', () => {
  it('answers 503 saying the storage is missing, naming no bucket, endpoint or host (G262)', async () => {
    const broken = await createHarness({ env: s3.env({ MEDIAGATE_S3_BUCKET: 'no-such-bucket' }) });
    try {
      const res = await broken.app.inject({ method: 'GET', url: '/readyz' });
      expect(res.statusCode).toBe(503);
      expect(body(res).error.message).toBe('Not ready: storage: the file storage cannot be reached (the log names it and why)');
      expect(res.body).not.toMatch(/no-such-bucket|127\.0\.0\.1|s3:\/\//);
    } finally {
      await broken.close();
    }
  });
});
