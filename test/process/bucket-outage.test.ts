/**
 * Issue 23, storage faults (G260-G263): a gateway process (SQLite, results in an S3-compatible
 * bucket, the sandbox taking a moment per picture) takes a steady stream of submits while its
 * bucket's server is stopped and started again. Every accepted task completes, each on its first
 * attempt (the worker kept the result and uploaded it again; no new generation), and while the
 * bucket is down `/files` and asset uploads answer 503 with `Retry-After`, naming no bucket, host
 * or port. The outage lasts 20 s, as in the report; the rule does not
 * depend on the length, the worker waits as long as it holds the task.
 */
import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configFiles } from '../helpers/config-files.js';
import { tempDir } from '../helpers/temp-root.js';
import { waitFor } from '../helpers/wait-for.js';
import { image } from '../helpers/media-fixtures.js';
import { ensureBuilt, startServerProcess, type ServerProcess } from '../helpers/process.js';
import { type S3Server, startS3Server, useS3Credentials } from '../helpers/s3-server.js';

const KEY = 'bucket-outage-key-0123456789abcdef';
const OUTAGE_MS = 20_000;
const files = configFiles('mediagate-bucket-outage-');

let s3: S3Server;
let gateway: ServerProcess;
let dataDir: string;
beforeAll(async () => {
  ensureBuilt();
  useS3Credentials();
  s3 = await startS3Server({ bucket: 'outage-bucket' });
  dataDir = tempDir('mediagate-bucket-outage-');
  gateway = await startServerProcess({
    ...s3.env(),
    MEDIAGATE_DATA_DIR: dataDir,
    MEDIAGATE_BOOTSTRAP_KEY: KEY,
    MEDIAGATE_SIGNING_SECRET: 'bucket-outage-secret-0123456789abcdef',
    MEDIAGATE_PROVIDERS: files.file({ providers: { sandbox: { type: 'sandbox', timing: 'fast' } } }),
    MEDIAGATE_WORKER_CONCURRENCY: '16',
    MEDIAGATE_RATE_LIMIT: 'off',
    MEDIAGATE_MAX_TASKS_IN_FLIGHT: '0',
    MEDIAGATE_LOG_LEVEL: 'info',
  });
}, 120_000);
afterAll(async () => {
  gateway?.child.kill('SIGKILL');
  await gateway?.exited;
  await s3?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
}, 60_000);

const auth = { authorization: `Bearer ${KEY}` };

async function submit(i: number): Promise<{ status: number; id?: string; body: string }> {
  const res = await fetch(`${gateway.url}/v1/pic/images`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'pic', prompt: `outage ${i}`, size: '1:1' }),
  });
  const body = await res.text();
  return { status: res.status, id: res.status === 200 ? (JSON.parse(body) as { id: string }).id : undefined, body };
}

/** The task's final reply (long-polled). */
async function finalReply(id: string): Promise<Record<string, any>> {
  for (;;) {
    const res = await fetch(`${gateway.url}/v1/result/${id}?wait=20`, { headers: auth });
    const json = (await res.json()) as Record<string, any>;
    if (['completed', 'failed', 'cancelled'].includes(json.status as string)) return json;
  }
}

/** The `/files` path of the first result link of a reply. */
function filePath(reply: Record<string, any>): string {
  let found: string | undefined;
  const visit = (v: unknown): void => {
    if (found) return;
    if (typeof v === 'string' && v.includes('/files/')) found = v.slice(v.indexOf('/files/'));
    else if (v && typeof v === 'object') for (const x of Object.values(v)) visit(x);
  };
  visit(reply);
  if (!found) throw new Error(`no result link in ${JSON.stringify(reply)}`);
  return found;
}

const leaks = /outage-bucket|127\.0\.0\.1|:\d{4,5}\b|s3:\/\//;

describe('the bucket is unreachable for a while (G260, G261)', () => {
  it('accepted tasks all complete on their first attempt; /files and uploads answer 503 + Retry-After meanwhile', async () => {
    const before = await submit(-1);
    expect(before.status).toBe(200);
    const link = filePath(await finalReply(before.id!));
    expect((await fetch(`${gateway.url}${link}`)).status).toBe(200);

    // a steady stream of submits, across the outage
    const accepted: string[] = [];
    const outcomes: Record<string, number> = {};
    let streaming = true;
    const stream = (async () => {
      for (let i = 0; streaming; i++) {
        const r = await submit(i);
        outcomes[r.status] = (outcomes[r.status] ?? 0) + 1;
        if (r.id) accepted.push(r.id);
        await new Promise((resolve) => setTimeout(resolve, 150));
      }
    })();
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const outage = s3.outage(OUTAGE_MS);
    await new Promise((resolve) => setTimeout(resolve, 1500));

    // during the outage: a download and an upload answer 503 with Retry-After, naming nothing of the bucket
    const download = await fetch(`${gateway.url}${link}`);
    const downloadBody = await download.text();
    expect(download.status, downloadBody).toBe(503);
    expect(Number(download.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(JSON.parse(downloadBody).error.code).toBe('service_unavailable');
    expect(downloadBody).not.toMatch(leaks);
    const form = new FormData();
    form.append('file', new Blob([await image(640, 480)], { type: 'image/png' }), 'x.png');
    const upload = await fetch(`${gateway.url}/v2/model-center/assets`, { method: 'POST', headers: auth, body: form });
    const uploadBody = await upload.text();
    expect(upload.status, uploadBody).toBe(503);
    expect(Number(upload.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(uploadBody).not.toMatch(leaks);
    const ready = await fetch(`${gateway.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.text()).not.toMatch(leaks);

    await outage;
    await new Promise((resolve) => setTimeout(resolve, 1000));
    streaming = false;
    await stream;
    expect(Object.keys(outcomes)).toEqual(['200']); // submits without media need no bucket
    expect(accepted.length).toBeGreaterThan(10);

    // every accepted task completes, its result downloadable
    const replies = await Promise.all(accepted.map((id) => finalReply(id)));
    expect(replies.filter((r) => r.status !== 'completed').map((r) => [r.id, r.status, r.error])).toEqual([]);
    for (const r of replies.slice(0, 5)) expect((await fetch(`${gateway.url}${filePath(r)}`)).status).toBe(200);
    // on their first attempt: the outage held results back, it did not fail attempts or start generations again
    const db = new Database(path.join(dataDir, 'mediagate.db'), { readonly: true });
    try {
      const rows = db.prepare(`SELECT id, attempts FROM tasks WHERE id IN (${accepted.map(() => '?').join(',')})`).all(...accepted) as Array<{
        id: string;
        attempts: number;
      }>;
      expect(rows.filter((r) => r.attempts !== 1)).toEqual([]);
    } finally {
      db.close();
    }
    // and the outage did hold some results back
    expect(gateway.output()).toContain('the file storage cannot be reached: keeping the result and storing it again when it answers');
    await waitFor(async () => ((await fetch(`${gateway.url}/readyz`)).status === 200 ? true : undefined), 15_000, '/readyz to be 200 again');
    expect(gateway.child.exitCode).toBeNull();
  }, 120_000);
});
