import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../../src/auth/keys.js';
import { openSqliteStore } from '../../../src/store/sqlite/open.js';
import { startServer, type RunningServer } from '../../../src/main/serve.js';
import { tempDir } from '../../helpers/temp-root.js';
import { waitFor } from '../../helpers/wait-for.js';

let server: RunningServer;
let key: string;
let dataDir: string;

beforeAll(async () => {
  dataDir = tempDir();
  // The CLI writes keys into the same database the server reads (both through the store).
  const store = openSqliteStore(path.join(dataDir, 'mediagate.db'));
  key = (await createApiKey(store.keys, 'http-test')).secret;
  await store.close();
  server = await startServer({
    MEDIAGATE_MIN_FREE_DISK_MB: '0',
    PORT: '0',
    HOST: '127.0.0.1',
    MEDIAGATE_DATA_DIR: dataDir,
    MEDIAGATE_SANDBOX_TIMING: 'instant',
    MEDIAGATE_LOG_LEVEL: 'silent',
  });
});
afterAll(async () => {
  await server.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

async function api(method: string, url: string, payload?: unknown) {
  const res = await fetch(`${server.url}${url}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(payload !== undefined && { 'content-type': 'application/json' }) },
    ...(payload !== undefined && { body: JSON.stringify(payload) }),
  });
  return { status: res.status, json: (await res.json()) as Record<string, any> };
}

describe('pic lifecycle over real HTTP', () => {
  it.each([
    { model: 'pic-2', resolution: '2k', size: '16:9', width: 2048, height: 1152 },
    { model: 'pic-pro', resolution: '1k', size: '9:16', width: 576, height: 1024 },
    { model: 'pic', resolution: '4k', size: '21:9', width: 1024, height: 439 },
    { model: 'pic-pro-stable', resolution: undefined, size: undefined, width: 1024, height: 1024 },
  ])('$model $resolution $size -> a real $width x $height PNG', async ({ model, resolution, size, width, height }) => {
    const created = await api('POST', '/v1/pic/images', { model, prompt: 'a red fox', resolution, size });
    expect(created.status).toBe(200);
    expect(created.json).toMatchObject({ object: 'image', status: 'queued', error: null });
    const done = await waitFor(
      async () => {
        const q = await api('GET', `/v1/result/${created.json.id}`);
        return q.json.status === 'completed' || q.json.status === 'failed' ? q.json : undefined;
      },
      15_000,
      'completion',
    );
    expect(done).toMatchObject({ id: created.json.id, object: 'image.generation', status: 'completed', error: null, progress: 100 });
    expect(done.image_url).toMatch(new RegExp(`^${server.config.publicUrl}/files/`));
    const download = await fetch(String(done.image_url).replace(server.config.publicUrl, server.url));
    expect(download.status).toBe(200);
    expect(download.headers.get('content-type')).toBe('image/png');
    const bytes = Buffer.from(await download.arrayBuffer());
    expect(Number(download.headers.get('content-length'))).toBe(bytes.length);
    const meta = await sharp(bytes).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['png', width, height]);
  });

  it('a [fail] prompt ends failed with a clear error and a null image_url', async () => {
    const created = await api('POST', '/v1/pic/images', { model: 'pic', prompt: 'please [fail] now' });
    const done = await waitFor(
      async () => {
        const q = await api('GET', `/v1/result/${created.json.id}`);
        return q.json.status === 'failed' ? q.json : undefined;
      },
      15_000,
      'failure',
    );
    expect(done.image_url).toBeNull();
    expect(done.error).toMatch(/\[fail\]/);
  });

  it('range requests get 206 with the right slice', async () => {
    const created = await api('POST', '/v1/pic/images', { model: 'pic', prompt: 'range' });
    const done = await waitFor(
      async () => {
        const q = await api('GET', `/v1/result/${created.json.id}`);
        return q.json.status === 'completed' ? q.json : undefined;
      },
      15_000,
      'completion',
    );
    const url = String(done.image_url).replace(server.config.publicUrl, server.url);
    const whole = Buffer.from(await (await fetch(url)).arrayBuffer());
    const part = await fetch(url, { headers: { range: 'bytes=10-19' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 10-19/${whole.length}`);
    expect(Buffer.from(await part.arrayBuffer())).toEqual(whole.subarray(10, 20));
    const tail = await fetch(url, { headers: { range: 'bytes=-5' } });
    expect(Buffer.from(await tail.arrayBuffer())).toEqual(whole.subarray(whole.length - 5));
    const bad = await fetch(url, { headers: { range: `bytes=${whole.length + 5}-` } });
    expect(bad.status).toBe(416);
  });
});
