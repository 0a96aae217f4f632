import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FsBlobStore } from '../../src/media/fs-blob-store.js';
import { ResultUrlSigner } from '../../src/media/signed-url.js';
import { byteRangeOf, ifRangeHolds } from '../../src/http/conditional-get.js';
import { registerFileRoutes } from '../../src/routes/files.js';
import { sweepExpiredResults } from '../../src/tasks/retention.js';
import { createLogger } from '../../src/logger.js';
import { createHarness, type Harness, localBlobs } from '../helpers/harness.js';
import { tempDir } from '../helpers/temp-root.js';
import { body } from '../helpers/json.js';

/** The URL with the first character of its signature changed (to one it is not). */
const tamperSignature = (url: string): string => url.replace(/sig=(.)/, (_m, c: string) => `sig=${c === 'Z' ? 'Y' : 'Z'}`);

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h.close();
});

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
    for (const bad of [
      tamperSignature(path),
      path.replace(/exp=(\d+)/, (_m, e) => `exp=${Number(e) + 1}`),
      path.replace(/image\.([0-9a-f]+)\.png/, 'image.$1.jpg'),
      path.split('?')[0]!,
    ]) {
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

  it('expire with the family retention: 24 h after completion for pic (D20)', async () => {
    const { id, path } = await completedImageUrl();
    const task = (await h.store.tasks.get(id))!;
    const exp = Number(new URL(`http://x${path}`).searchParams.get('exp'));
    expect(exp).toBe(Math.floor((task.finishedAt! + 24 * 3_600_000) / 1000));
    expect(task.expiresAt).toBe(task.finishedAt! + 24 * 3_600_000);
  });

  it('the retention sweeper deletes expired pic results but keeps the task', async () => {
    const { id, path } = await completedImageUrl('sweep me');
    const task = (await h.store.tasks.get(id))!;
    const swept = await sweepExpiredResults(h.store.tasks, h.blobs, createLogger('silent'), 24, task.expiresAt! + 1);
    expect(swept).toBeGreaterThanOrEqual(1);
    expect((await h.store.tasks.get(id))?.status).toBe('completed');
    expect((await h.store.tasks.get(id))?.expiresAt).toBeNull();
    const res = await h.app.inject({ method: 'GET', url: path });
    expect(res.statusCode).toBe(404);
    expect(body(res).error.code).toBe('result_not_found');
  });
});

/** A completed result: its signed path, its file on disk, the bytes and the validators served with them. */
interface Served {
  id: string;
  path: string;
  file: string;
  bytes: Buffer;
  size: number;
  etag: string;
  lastModified: string;
}

async function servedResult(prompt: string): Promise<Served> {
  const { id, path: p } = await completedImageUrl(prompt);
  const name = decodeURIComponent(p.split('?')[0]!.split('/').pop()!);
  const file = localBlobs(h).pathOf(id, name);
  const bytes = fs.readFileSync(file);
  const res = await h.app.inject({ method: 'GET', url: p });
  expect(res.statusCode).toBe(200);
  return { id, path: p, file, bytes, size: bytes.length, etag: String(res.headers.etag), lastModified: String(res.headers['last-modified']) };
}

function get(url: string, headers: Record<string, string> = {}, method: 'GET' | 'HEAD' = 'GET') {
  return h.app.inject({ method, url, headers });
}

describe('result downloads over HTTP (RFC 9110)', () => {
  let r: Served;
  beforeAll(async () => {
    r = await servedResult('http semantics');
  });

  it('serve the bytes on disk with a strong ETag, Last-Modified and the gateway headers', async () => {
    const res = await get(r.path);
    expect(res.statusCode).toBe(200);
    expect(res.rawPayload.equals(r.bytes)).toBe(true);
    expect(res.headers['content-length']).toBe(String(r.size));
    expect(res.headers['content-type']).toBe('image/png');
    expect(res.headers['accept-ranges']).toBe('bytes');
    expect(res.headers['cache-control']).toBe('private, max-age=3600');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['content-range']).toBeUndefined();
    const stat = fs.statSync(r.file);
    expect(r.etag).toBe(`"${stat.size.toString(16)}-${stat.mtime.getTime().toString(16)}"`); // strong: no W/
    expect(r.lastModified).toBe(stat.mtime.toUTCString());
    expect((await get(r.path)).headers.etag).toBe(r.etag); // stable across requests
  });

  it('answer HEAD with the GET headers and no body', async () => {
    const res = await get(r.path, {}, 'HEAD');
    expect(res.statusCode).toBe(200);
    expect(res.rawPayload.length).toBe(0);
    expect(res.headers['content-length']).toBe(String(r.size));
    expect(res.headers['content-type']).toBe('image/png');
    expect(res.headers.etag).toBe(r.etag);
    expect(res.headers['last-modified']).toBe(r.lastModified);
    expect(res.headers['accept-ranges']).toBe('bytes');
  });

  it('ignore Range on HEAD (range handling is defined for GET only, RFC 9110 §14.2)', async () => {
    const res = await get(r.path, { range: 'bytes=0-9' }, 'HEAD');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-length']).toBe(String(r.size));
    expect(res.headers['content-range']).toBeUndefined();
    expect(res.rawPayload.length).toBe(0);
  });

  it('answer If-None-Match with the current ETag (or its weak form, in a list, or *) with 304', async () => {
    for (const inm of [r.etag, `W/${r.etag}`, `"nope", ${r.etag}`, '*']) {
      const res = await get(r.path, { 'if-none-match': inm });
      expect(res.statusCode, inm).toBe(304);
      expect(res.rawPayload.length).toBe(0);
      expect(res.headers.etag).toBe(r.etag);
      expect(res.headers['cache-control']).toBe('private, max-age=3600');
      expect(res.headers['content-type']).toBeUndefined();
      expect(res.headers['content-length']).toBeUndefined();
    }
    expect((await get(r.path, { 'if-none-match': r.etag }, 'HEAD')).statusCode).toBe(304);
    expect((await get(r.path, { 'if-none-match': r.etag, 'cache-control': 'no-cache' })).statusCode).toBe(304); // a directive for caches
    const stale = await get(r.path, { 'if-none-match': '"0-0"' });
    expect(stale.statusCode).toBe(200);
    expect(stale.rawPayload.equals(r.bytes)).toBe(true);
  });

  it('answer If-Modified-Since at or after Last-Modified with 304, earlier or invalid with 200', async () => {
    expect((await get(r.path, { 'if-modified-since': r.lastModified })).statusCode).toBe(304);
    expect((await get(r.path, { 'if-modified-since': new Date(Date.now() + 86_400_000).toUTCString() })).statusCode).toBe(304);
    expect((await get(r.path, { 'if-modified-since': 'Thu, 01 Jan 1970 00:00:00 GMT' })).statusCode).toBe(200);
    expect((await get(r.path, { 'if-modified-since': 'not a date' })).statusCode).toBe(200);
    // If-None-Match wins over If-Modified-Since (RFC 9110 §13.1.3): a stale tag is 200 whatever the date.
    expect((await get(r.path, { 'if-none-match': '"0-0"', 'if-modified-since': r.lastModified })).statusCode).toBe(200);
  });

  it('answer a failed If-Match or If-Unmodified-Since with 412 and no body', async () => {
    expect((await get(r.path, { 'if-match': r.etag })).statusCode).toBe(200);
    expect((await get(r.path, { 'if-match': '*' })).statusCode).toBe(200);
    const failing: Array<Record<string, string>> = [
      { 'if-match': '"0-0"' },
      { 'if-match': `W/${r.etag}` },
      { 'if-unmodified-since': 'Thu, 01 Jan 1970 00:00:00 GMT' },
    ];
    for (const headers of failing) {
      const res = await get(r.path, headers);
      expect(res.statusCode, JSON.stringify(headers)).toBe(412); // If-Match compares strongly: a weak tag never matches
      expect(res.rawPayload.length).toBe(0);
    }
    // If-Unmodified-Since is ignored when If-Match is present (RFC 9110 §13.1.4).
    expect((await get(r.path, { 'if-match': r.etag, 'if-unmodified-since': 'Thu, 01 Jan 1970 00:00:00 GMT' })).statusCode).toBe(200);
  });

  it('serve one byte range as 206 with Content-Range', async () => {
    const cases: Array<[string, number, number]> = [
      ['bytes=0-9', 0, 9],
      [`bytes=10-`, 10, r.size - 1],
      ['bytes=-10', r.size - 10, r.size - 1],
      [`bytes=5-${r.size + 1000}`, 5, r.size - 1], // last-pos past the end: up to the end
      [`bytes=-${r.size + 1000}`, 0, r.size - 1], // a suffix longer than the file: the whole file (§14.1.2)
      ['bytes=0-99999999999999999999999999', 0, r.size - 1], // long numerals do not overflow
      ['Bytes=0-9', 0, 9], // the unit is case-insensitive
      ['bytes=0-9, ', 0, 9], // empty list elements are allowed
      ['bytes=0-4,3-9', 0, 9], // overlapping ranges merge into one
      ['bytes=0-9,999999-', 0, 9], // unsatisfiable ranges beside a satisfiable one are dropped
    ];
    for (const [range, start, end] of cases) {
      const res = await get(r.path, { range });
      expect(res.statusCode, range).toBe(206);
      expect(res.headers['content-range'], range).toBe(`bytes ${start}-${end}/${r.size}`);
      expect(res.headers['content-length'], range).toBe(String(end - start + 1));
      expect(res.headers['content-type']).toBe('image/png');
      expect(res.headers.etag).toBe(r.etag);
      expect(res.rawPayload.equals(r.bytes.subarray(start, end + 1)), range).toBe(true);
    }
  });

  it('serve the whole file (200) for several disjoint ranges rather than multipart/byteranges', async () => {
    const res = await get(r.path, { range: 'bytes=0-1,5-9' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('image/png');
    expect(res.headers['content-range']).toBeUndefined();
    expect(res.rawPayload.equals(r.bytes)).toBe(true);
  });

  it('ignore an invalid Range (200, whole file) but refuse a valid unsatisfiable one (416, Content-Range bytes */size)', async () => {
    for (const range of ['bytes=5-2', 'bytes=abc', 'bytes=0-1,5-2', 'bytes=', 'bytes=--1', 'bytes=1-2-3', 'items=0-1', '0-1']) {
      const res = await get(r.path, { range });
      expect(res.statusCode, range).toBe(200);
      expect(res.headers['content-range'], range).toBeUndefined();
      expect(res.rawPayload.equals(r.bytes), range).toBe(true);
    }
    for (const range of ['bytes=999999-', `bytes=${r.size}-`, 'bytes=-0', `bytes=${r.size}-${r.size + 5},999999-`]) {
      const res = await get(r.path, { range });
      expect(res.statusCode, range).toBe(416);
      expect(res.headers['content-range'], range).toBe(`bytes */${r.size}`);
      expect(res.rawPayload.length).toBe(0);
    }
  });

  it('honour If-Range only for an exact strong validator: current ETag or Last-Modified 206, anything else 200', async () => {
    for (const ifRange of [r.etag, r.lastModified]) {
      const res = await get(r.path, { range: 'bytes=0-9', 'if-range': ifRange });
      expect(res.statusCode, ifRange).toBe(206);
      expect(res.headers['content-range']).toBe(`bytes 0-9/${r.size}`);
      expect(res.rawPayload.equals(r.bytes.subarray(0, 10))).toBe(true);
    }
    const later = new Date(Date.parse(r.lastModified) + 60_000).toUTCString(); // dates match exactly, not "at or after"
    for (const ifRange of ['"0-0"', `W/${r.etag}`, later, 'Thu, 01 Jan 1970 00:00:00 GMT', 'garbage']) {
      const res = await get(r.path, { range: 'bytes=0-9', 'if-range': ifRange });
      expect(res.statusCode, ifRange).toBe(200);
      expect(res.headers['content-range']).toBeUndefined();
      expect(res.rawPayload.equals(r.bytes), ifRange).toBe(true);
    }
    // If-None-Match is evaluated before Range: a match is 304 even with a range.
    expect((await get(r.path, { range: 'bytes=0-9', 'if-none-match': r.etag })).statusCode).toBe(304);
  });

  it('check the signature first: a tampered or expired link is 403 even for a file that exists', async () => {
    const tampered = await get(tamperSignature(r.path), { range: 'bytes=0-9', 'if-none-match': r.etag });
    expect(tampered.statusCode).toBe(403);
    expect(body(tampered).error.code).toBe('result_link_invalid');
    const name = path.basename(r.file);
    const expired = await get(h.signer.signResultUrl(r.id, name, Date.now() - 1000).replace(h.config.publicUrl, ''));
    expect(expired.statusCode).toBe(403);
    expect(body(expired).error.code).toBe('result_link_expired');
  });

  it('answer 404 result_not_found for a deleted file and for a directory under the name (no redirect)', async () => {
    const gone = await servedResult('deleted file');
    fs.rmSync(gone.file);
    for (const method of ['GET', 'HEAD'] as const) {
      const res = await get(gone.path, {}, method);
      expect(res.statusCode).toBe(404);
      if (method === 'GET') expect(body(res).error.code).toBe('result_not_found');
    }
    fs.mkdirSync(path.join(path.dirname(r.file), 'folder.png'));
    const dir = await get(h.signer.signResultUrl(r.id, 'folder.png', Date.now() + 60_000).replace(h.config.publicUrl, ''));
    expect(dir.statusCode).toBe(404);
    expect(body(dir).error.code).toBe('result_not_found');
    expect(dir.headers.location).toBeUndefined();
  });

  it('behave the same over a real socket (range, HEAD without a body, 304)', async () => {
    const address = await h.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (h.app.server.address() as AddressInfo).port;
    expect(address).toContain(String(port));
    const raw = (method: string, headers: Record<string, string>) =>
      new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
        const req = http.request({ host: '127.0.0.1', port, method, path: r.path, headers }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
        });
        req.on('error', reject);
        req.end();
      });
    const part = await raw('GET', { range: 'bytes=-16', 'if-range': r.etag });
    expect(part.status).toBe(206);
    expect(part.headers['content-range']).toBe(`bytes ${r.size - 16}-${r.size - 1}/${r.size}`);
    expect(part.body.equals(r.bytes.subarray(r.size - 16))).toBe(true);
    const head = await raw('HEAD', {});
    expect(head.status).toBe(200);
    expect(head.headers['content-length']).toBe(String(r.size));
    expect(head.body.length).toBe(0);
    const whole = await raw('GET', {});
    expect(whole.body.equals(r.bytes)).toBe(true);
    expect((await raw('GET', { 'if-none-match': r.etag })).status).toBe(304);
  });
});

describe('result downloads from a data directory inside a dot-directory', () => {
  it("serve its files (no dot-file rule applies above the store's root)", async () => {
    const dir = tempDir();
    const blobs = new FsBlobStore(path.join(dir, '.mediagate', 'results'));
    await blobs.put('task_dot', 'image.png', { data: Buffer.from('0123456789') });
    const signer = new ResultUrlSigner('secret-0123456789abcdefghijklmnop', 'http://x');
    const app = Fastify();
    registerFileRoutes(app, signer, { results: blobs });
    try {
      const res = await app.inject({
        method: 'GET',
        url: signer.signResultUrl('task_dot', 'image.png', Date.now() + 60_000).replace('http://x', ''),
        headers: { range: 'bytes=2-4' },
      });
      expect(res.statusCode).toBe(206);
      expect(res.body).toBe('234');
    } finally {
      await app.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('byteRangeOf / ifRangeHolds', () => {
  it('take one satisfiable range, clamp long suffixes and ends, merge overlaps, ignore invalid fields', () => {
    expect(byteRangeOf('bytes=0-9', 100)).toEqual({ start: 0, end: 9 });
    expect(byteRangeOf('BYTES= 0-9 , 5-20', 100)).toEqual({ start: 0, end: 20 });
    expect(byteRangeOf('bytes=0-9,10-19', 100)).toEqual({ start: 0, end: 19 }); // adjacent ranges merge too
    expect(byteRangeOf('bytes=-500', 100)).toEqual({ start: 0, end: 99 });
    expect(byteRangeOf('bytes=-5', 100)).toEqual({ start: 95, end: 99 });
    expect(byteRangeOf('bytes=90-5000', 100)).toEqual({ start: 90, end: 99 });
    expect(byteRangeOf('bytes=0-9,-5', 100)).toBeUndefined(); // two disjoint ranges: the whole file
    expect(byteRangeOf('bytes=-0', 100)).toBe('unsatisfiable');
    expect(byteRangeOf('bytes=200-', 100)).toBe('unsatisfiable');
    expect(byteRangeOf('bytes=100-100,99999999999999999999-', 100)).toBe('unsatisfiable');
    for (const bad of [
      undefined,
      'bytes=5-2',
      'bytes=',
      'bytes=,',
      'bytes=a-b',
      'bytes=0-1,x',
      'bytes=1-2-3',
      'lines=0-1',
      'bytes 0-1',
      'bytes=99999999999999999999-1',
    ]) {
      expect(byteRangeOf(bad, 100), String(bad)).toBeUndefined();
    }
    expect(byteRangeOf('bytes=0-1', 0)).toBeUndefined(); // an empty file ignores Range
  });

  it('hold If-Range only on an exact strong match', () => {
    const lm = 'Mon, 23 Nov 2026 19:43:46 GMT';
    expect(ifRangeHolds('"3e8-1"', '"3e8-1"', lm)).toBe(true);
    expect(ifRangeHolds('W/"3e8-1"', '"3e8-1"', lm)).toBe(false);
    expect(ifRangeHolds('"3e8-2"', '"3e8-1"', lm)).toBe(false);
    expect(ifRangeHolds(lm, '"3e8-1"', lm)).toBe(true);
    expect(ifRangeHolds('Monday, 23-Nov-26 19:43:46 GMT', '"3e8-1"', lm)).toBe(true); // obsolete RFC 850 form, same instant
    expect(ifRangeHolds('Mon, 23 Nov 2026 19:43:47 GMT', '"3e8-1"', lm)).toBe(false);
    expect(ifRangeHolds('soon', '"3e8-1"', lm)).toBe(false);
  });
});
