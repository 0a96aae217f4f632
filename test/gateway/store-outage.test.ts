/**
 * G256, G260: a request that needs the database or the file storage while it cannot be reached
 * answers 503 `service_unavailable` with `Retry-After`, in its family's error body, never a 500 or
 * a reset; the message names no host, port, bucket or path. The database's outage is made by
 * making the store's methods fail as node-postgres fails on a dropped connection; the storage's by
 * making the result store fail as the S3 client fails when the bucket's endpoint refuses.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { S3StorageError } from '../../src/media/s3-storage-error.js';
import { createHarness, type Harness } from '../helpers/harness.js';

let h: Harness;
let down = false;
beforeAll(async () => {
  h = await createHarness({ workers: false });
  // every method of these stores fails while `down`, as a pool's query does when its connection is gone
  for (const part of [h.store.keys, h.store.tasks, h.store.credits, h.store.idempotency, h.store.usage, h.store.assets] as unknown as Array<
    Record<string, unknown>
  >) {
    let proto = Object.getPrototypeOf(part) as Record<string, unknown> | null;
    const names = new Set<string>();
    while (proto && proto !== Object.prototype) {
      for (const name of Object.getOwnPropertyNames(proto)) if (name !== 'constructor' && typeof proto[name] === 'function') names.add(name);
      proto = Object.getPrototypeOf(proto) as Record<string, unknown> | null;
    }
    for (const name of names) {
      const real = (part[name] as (...args: unknown[]) => unknown).bind(part);
      part[name] = (...args: unknown[]) => {
        if (down) return Promise.reject(Object.assign(new Error('connect ECONNREFUSED 10.9.8.7:5432'), { code: 'ECONNREFUSED' }));
        return real(...args);
      };
    }
  }
}, 60_000);
afterAll(async () => {
  down = false;
  await h?.close();
});

const leaks = /10\.9\.8\.7|5432|s3:\/\/|secret-bucket|results\//;

describe('the database cannot be reached (G256)', () => {
  it.each([
    ['a create (standard body)', { method: 'POST' as const, url: '/v1/pic/images', payload: { model: 'pic', prompt: 'a fox' } }, (b: any) => b.error.code],
    [
      'a create (videos body)',
      { method: 'POST' as const, url: '/v1/videos/videos', payload: { model: 'videos', prompt: 'a fox', duration: 5 } },
      (b: any) => b.code,
    ],
    [
      'a chat (chat body)',
      { method: 'POST' as const, url: '/v1/chat/completions', payload: { model: 'chat-2.5-flash', messages: [{ role: 'user', content: 'hi' }] } },
      (b: any) => b.code,
    ],
    ['a query', { method: 'GET' as const, url: '/v1/result/task_doesnotmatter0000000000000000', payload: undefined }, (b: any) => b.error.code],
    ['a task list', { method: 'GET' as const, url: '/v1/tasks', payload: undefined }, (b: any) => b.error.code],
  ])('%s: 503 with Retry-After in the family body', async (_what, req, codeOf) => {
    down = true;
    try {
      const res = await h.app.inject({ ...req, headers: h.auth() });
      expect(res.statusCode, res.body).toBe(503);
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
      expect(res.headers['x-error-code']).toBe('service_unavailable');
      expect(String(codeOf(res.json()))).toMatch(/^(service_unavailable|503)$/);
      expect(res.body).not.toMatch(leaks);
    } finally {
      down = false;
    }
    // and once it answers again, the same call works
    const again = await h.app.inject({ ...req, headers: h.auth() });
    expect(again.statusCode).not.toBe(503);
  });

  it('/readyz: 503 naming no host or port', async () => {
    const ping = h.store.ping;
    h.store.ping = async () => {
      throw Object.assign(new Error('connect ECONNREFUSED 10.9.8.7:5432'), { code: 'ECONNREFUSED' });
    };
    try {
      const res = await h.app.inject({ method: 'GET', url: '/readyz' });
      expect(res.statusCode).toBe(503);
      expect(res.body).not.toMatch(leaks);
    } finally {
      h.store.ping = ping;
    }
  });
});

describe('the file storage cannot be reached (G260)', () => {
  it('/files: 503 with Retry-After, naming no bucket, host or path', async () => {
    const blobs = h.blobs as unknown as Record<string, unknown>;
    const stat = blobs.stat;
    blobs.stat = async () => {
      throw new S3StorageError('HeadObject', 's3://secret-bucket/results/t/image.png', 'Error', undefined, 'connect ECONNREFUSED 10.9.8.7:9000');
    };
    try {
      const url = new URL(h.signer.signResultUrl('task_abc', 'image.ab12.png', Date.now() + 60_000));
      const res = await h.app.inject({ method: 'GET', url: `${url.pathname}${url.search}` });
      expect(res.statusCode, res.body).toBe(503);
      expect(res.json().error.code).toBe('service_unavailable');
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
      expect(res.body).not.toMatch(leaks);
    } finally {
      blobs.stat = stat;
    }
  });
});
