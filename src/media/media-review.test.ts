import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../test/helpers/wait-for.js';
import { image } from '../../test/helpers/media-fixtures.js';
import type { MediaLimits } from '../contract/media-limits.js';
import { mediaRefs, refsOf } from '../contract/media-refs.js';
import { AppError } from '../errors.js';
import { openSqliteStore } from '../store/sqlite/open.js';
import { FsBlobStore } from './fs-blob-store.js';
import { type AdmissionLimits, MediaAdmission } from './media-admission.js';
import { MediaReviewer } from './media-review.js';
import { fetchMediaToFile } from './safe-fetch.js';

// The reviewer with small budgets of its own: byte reservations (lowered to the Content-Length)
// and the per-key queue bound, which the gateway's settings make too large to reach in a test.
const LIMITS: MediaLimits = { frames: { formats: ['png'], maxBytes: 100_000 }, images: { formats: ['png'], maxBytes: 100_000 } };

let dir: string;
let tmp: string;
let inputs: FsBlobStore;
const servers: http.Server[] = [];
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mg-review-'));
  tmp = path.join(dir, 'tmp');
  fs.mkdirSync(tmp);
  inputs = new FsBlobStore(path.join(dir, 'inputs'));
});
afterEach(async () => {
  await Promise.all(
    servers.splice(0).map(
      (s) =>
        new Promise<void>((r) => {
          s.closeAllConnections();
          s.close(() => r());
        }),
    ),
  );
  fs.rmSync(dir, { recursive: true, force: true });
});

function reviewer(limits: Partial<AdmissionLimits>): { reviewer: MediaReviewer; admission: MediaAdmission } {
  const admission = new MediaAdmission({ slots: 8, keySlots: 4, bytes: 1_000_000, keyBytes: 1_000_000, keyQueue: 16, ...limits });
  const store = openSqliteStore(':memory:');
  return {
    admission,
    reviewer: new MediaReviewer({
      fetch: ({ url, field, maxBytes, accept, signal, onLength }) =>
        fetchMediaToFile(url, { field, maxBytes, allowPrivate: true, accept, signal, ...(onLength && { onLength }), dir: tmp }),
      inputs,
      assets: store.assets,
      assetFiles: new FsBlobStore(path.join(dir, 'assets')),
      admission,
      timeoutMs: 30_000,
    }),
  };
}

async function serve(handler: http.RequestListener): Promise<(p: string) => string> {
  const server = http.createServer(handler);
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return (p) => `http://127.0.0.1:${port}${p}`;
}

describe('MediaReviewer: byte reservations', () => {
  it("a medium reserves its size cap until its Content-Length says less: then the key's next medium starts at once", async () => {
    // Key budget 150,000 bytes, cap 100,000 per image: the second image cannot start while the first
    // holds its cap. The first declares a small Content-Length and then holds its body until the
    // second has been requested, which only the lowered reservation allows.
    const png = await image(400, 400);
    const hits: string[] = [];
    let openGate!: () => void;
    const gate = new Promise<void>((r) => {
      openGate = r;
    });
    const url = await serve((req, res) => {
      hits.push(req.url!);
      res.writeHead(200, { 'content-type': 'image/png', 'content-length': png.length });
      if (req.url === '/first.png') {
        res.write(png.subarray(0, 600));
        void gate.then(() => res.end(png.subarray(600)));
      } else {
        res.end(png);
      }
    });
    const { reviewer: r, admission } = reviewer({ keyBytes: 150_000 });
    const reviewing = r.review('task1', 'keyA', mediaRefs({ images: refsOf('image_urls', [url('/first.png'), url('/second.png')]) }), LIMITS);
    await expect.poll(() => hits, { timeout: 10_000 }).toEqual(['/first.png', '/second.png']);
    openGate();
    const reviewed = await reviewing;
    expect(reviewed.images.map((i) => i.stored)).toEqual(['0-images', '1-images']);
    expect(fs.readdirSync(path.join(inputs.root, 'task1')).sort()).toEqual(['0-images', '1-images']);
    expect(admission.snapshot()).toEqual({ active: 0, bytes: 0, queued: 0, keys: {} });
  });
});

describe('MediaReviewer: the per-key queue bound', () => {
  it('one medium more than a key may have waiting is a 429 naming its field; the request stops and keeps nothing', async () => {
    let requests = 0;
    const held: http.ServerResponse[] = [];
    const url = await serve((_req, res) => {
      requests++;
      held.push(res);
      res.writeHead(200, { 'content-type': 'image/png', 'content-length': 100_000 });
      res.flushHeaders(); // and no body until the test ends it
    });
    const { reviewer: r, admission } = reviewer({ keySlots: 1, keyQueue: 1 });
    // a first request of the key holds its slot and its one waiting place
    const first = r.review('task1', 'keyA', mediaRefs({ images: refsOf('image_urls', [url('/a.png'), url('/b.png')]) }), LIMITS).catch((e: unknown) => e);
    await waitFor(() => (admission.snapshot().queued === 1 && held.length === 1) || undefined, 5_000, 'the first request fetching and waiting');
    const media = mediaRefs({ images: refsOf('image_urls', [url('/c.png')]) });
    const err = await r.review('task2', 'keyA', media, LIMITS).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({
      code: 'rate_limited',
      status: 429,
      param: 'image_urls[0]',
      headers: { 'retry-after': '5' },
      message: 'image_urls[0]: this API key already has 1 media waiting to be fetched and checked; retry after 5 s',
    });
    expect(requests).toBe(1); // the first request's fetch only
    expect(fs.existsSync(path.join(inputs.root, 'task2'))).toBe(false);
    for (const res of held) res.destroy(); // the first request's fetch fails, and the request with it
    expect(await first).toBeInstanceOf(Error);
    expect(admission.snapshot()).toEqual({ active: 0, bytes: 0, queued: 0, keys: {} });
    expect(fs.readdirSync(tmp)).toEqual([]);
  });

  it('one request with more media URLs than a key may have at once is a 400 naming the first beyond, before any fetch', async () => {
    let requests = 0;
    const url = await serve((_req, res) => {
      requests++;
      res.writeHead(404).end();
    });
    const { reviewer: r, admission } = reviewer({ keySlots: 1, keyQueue: 1 });
    const media = mediaRefs({ images: refsOf('image_urls', [url('/a.png'), url('/b.png'), url('/c.png')]) });
    const err = await r.review('task3', 'keyA', media, LIMITS).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toMatchObject({
      code: 'invalid_request',
      status: 400,
      param: 'image_urls[2]',
      message:
        'image_urls[2]: one request may carry at most 2 media URLs to fetch (this one has 3); send the others as uploaded assets (assetId://) or in another request',
    });
    expect(requests).toBe(0);
    expect(admission.snapshot()).toEqual({ active: 0, bytes: 0, queued: 0, keys: {} });
  });
});
