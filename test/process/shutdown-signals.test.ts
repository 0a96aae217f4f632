/**
 * Graceful shutdown of a real `mediagate serve` process (issue 28, G340-G343), on SIGTERM:
 * - it stops listening at once (a new connection is refused) but answers a request that arrives on
 *   a connection kept alive from before, normally, with `Connection: close`;
 * - a long-poll answers at once with the task as it is, a status stream ends with one final
 *   `event: error` (`service_unavailable`) and a clean end, both long before the task finishes;
 * - a running generation finishes within MEDIAGATE_SHUTDOWN_GRACE_SECONDS and completes, using one
 *   attempt; one that cannot goes back to the queue at the end of the grace without using an
 *   attempt, and the next process completes it;
 * - the last log line is written and the process exits 0.
 * The sandbox takes 10 s for a picture (`realistic`), so every step after the signal surely happens
 * while the generation still runs; no duration is asserted, only order (log lines, replies).
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../../src/store/sqlite/open.js';
import { tempDir } from '../helpers/temp-root.js';
import { waitFor } from '../helpers/wait-for.js';
import { httpCall } from '../helpers/http-client.js';
import { ensureBuilt, startServerProcess, type ServerProcess } from '../helpers/process.js';

const KEY = 'shutdown-signals-key-0123456789';
const procs: ServerProcess[] = [];
const dirs: string[] = [];

beforeAll(() => ensureBuilt(), 200_000);
afterAll(() => {
  for (const p of procs) if (p.child.exitCode === null) p.child.kill('SIGKILL');
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

async function start(dataDir: string, env: Record<string, string> = {}): Promise<ServerProcess> {
  const p = await startServerProcess({
    MEDIAGATE_DATA_DIR: dataDir,
    MEDIAGATE_BOOTSTRAP_KEY: KEY,
    MEDIAGATE_SANDBOX_TIMING: 'realistic',
    MEDIAGATE_RATE_LIMIT: 'off',
    MEDIAGATE_LOG_LEVEL: 'info',
    ...env,
  });
  procs.push(p);
  return p;
}

async function submitPic(p: ServerProcess): Promise<string> {
  const r = await httpCall(`${p.url}/v1/pic/images`, { key: KEY, json: { model: 'pic', prompt: 'a slow fox' } });
  expect(r.status, r.body).toBe(200);
  return JSON.parse(r.body).id as string;
}

const statusOf = async (p: ServerProcess, id: string): Promise<string> => JSON.parse((await httpCall(`${p.url}/v1/result/${id}`, { key: KEY })).body).status;

/** The stored task, read from the data directory's database once no process runs. */
async function storedTask(dataDir: string, id: string): Promise<{ status: string; attempts: number }> {
  const store = openSqliteStore(path.join(dataDir, 'mediagate.db'));
  try {
    const t = (await store.tasks.get(id))!;
    return { status: t.status, attempts: t.attempts };
  } finally {
    await store.close();
  }
}

/** Index of the first log line holding every one of `parts`, -1 when none does. */
const lineIndex = (output: string, ...parts: string[]): number => output.split('\n').findIndex((l) => parts.every((x) => l.includes(x)));

// Side by side (G281): each test has a data directory and a process of its own, and each mostly
// waits for a 10 s generation.
describe.concurrent('SIGTERM (G340-G343)', () => {
  it('stops listening, answers kept-alive connections with Connection: close, ends long-polls and streams at once, lets the generation finish, exits 0', async () => {
    const dataDir = tempDir('mediagate-shutdown-');
    dirs.push(dataDir);
    const p = await start(dataDir, { MEDIAGATE_SHUTDOWN_GRACE_SECONDS: '60' });
    const id = await submitPic(p);
    await waitFor(async () => ((await statusOf(p, id)) === 'processing' ? true : undefined), 30_000, 'the generation to start');

    // each on a connection of its own that asks to be kept alive (Node's agent: false would ask to close it)
    const longPoll = httpCall(`${p.url}/v1/result/${id}?wait=60`, { key: KEY, agent: new http.Agent({ keepAlive: true }) });
    let streamed = '';
    let streamOpen!: () => void;
    const opened = new Promise<void>((resolve) => {
      streamOpen = resolve;
    });
    const stream = httpCall(`${p.url}/v1/tasks/${id}/events`, {
      key: KEY,
      agent: new http.Agent({ keepAlive: true }),
      onChunk: (text) => {
        streamed += text;
        if (streamed.includes('data: ')) streamOpen();
      },
    });
    await opened;
    const keptAlive = new http.Agent({ keepAlive: true, maxSockets: 1 });
    expect((await httpCall(`${p.url}/healthz`, { agent: keptAlive })).headers.connection).toBe('keep-alive');

    p.child.kill('SIGTERM');
    await waitFor(() => (p.output().includes('shutting down') ? true : undefined), 30_000, 'the shutdown to begin');

    // the long-poll: a normal reply with the task still running, and its connection closed after it
    const polled = await longPoll;
    expect(polled.status).toBe(200);
    expect(JSON.parse(polled.body)).toMatchObject({ id, status: 'processing' });
    expect(polled.headers.connection).toBe('close');
    // the stream: its last event says why it ends, and it ends cleanly (httpCall rejects on a reset)
    const events = (await stream).body.split('\n\n').filter((e) => e.trim() !== '');
    expect(events.at(-1)).toMatch(/^event: error\ndata: .*"code":"service_unavailable"/);
    expect(events.slice(0, -1).every((e) => JSON.parse(/data: (.*)/.exec(e)![1]!).status === 'processing')).toBe(true);

    // no new connection, but the kept-alive one is answered as usual, then closed
    await expect(httpCall(`${p.url}/healthz`)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    const late = await httpCall(`${p.url}/v1/result/${id}`, { key: KEY, agent: keptAlive });
    expect(late).toMatchObject({ status: 200, reusedSocket: true });
    expect(late.headers.connection).toBe('close');
    expect(JSON.parse(late.body).status).toBe('processing');
    keptAlive.destroy();

    expect(await p.exited).toBe(0);
    const out = p.output();
    const began = lineIndex(out, 'shutting down');
    expect(lineIndex(out, '"task completed"', id)).toBeGreaterThan(began); // finished after the signal
    expect(lineIndex(out, 'mediagate stopped')).toBeGreaterThan(lineIndex(out, '"task completed"', id)); // the last lines were written
    expect(await storedTask(dataDir, id)).toEqual({ status: 'completed', attempts: 1 });
  }, 120_000);

  it('a generation still running at the end of the grace goes back to the queue without using an attempt; the next process completes it', async () => {
    const dataDir = tempDir('mediagate-shutdown-');
    dirs.push(dataDir);
    const first = await start(dataDir, { MEDIAGATE_SHUTDOWN_GRACE_SECONDS: '1' });
    const id = await submitPic(first);
    await waitFor(async () => ((await statusOf(first, id)) === 'processing' ? true : undefined), 30_000, 'the generation to start');
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    expect(lineIndex(first.output(), 'returned to the queue on shutdown', id)).toBeGreaterThan(lineIndex(first.output(), 'shutting down'));
    expect(await storedTask(dataDir, id)).toEqual({ status: 'queued', attempts: 0 });

    const second = await start(dataDir);
    await waitFor(
      async () => {
        const polled = JSON.parse((await httpCall(`${second.url}/v1/result/${id}?wait=30`, { key: KEY })).body);
        return polled.status === 'completed' ? true : undefined;
      },
      90_000,
      'the next process to complete the task',
    );
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
    expect(await storedTask(dataDir, id)).toEqual({ status: 'completed', attempts: 1 });
  }, 120_000);
});
