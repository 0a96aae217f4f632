/**
 * What a request leaves behind (G426): under a closed-loop load of submits over 100 keep-alive
 * connections, what survives V8's young-generation collections must stay small. A request's
 * objects die with its reply; something that keeps them a little longer (a Set gaining and losing
 * every reply kept them until the next full collection) makes every young collection copy them
 * into the old generation, and the full collections that follow cost a submit more than its insert.
 * The gateway runs in a child process with `--trace-gc-nvp`, which prints what each young
 * collection promoted; the load is a fixed number of requests (no clock).
 */
import { spawn } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import readline from 'node:readline';
import { beforeAll, describe, expect, it } from 'vitest';
import { httpCall } from '../helpers/http-client.js';
import { ensureBuilt, ROOT } from '../helpers/process.js';

beforeAll(() => ensureBuilt(), 180_000);

/** Bytes promoted by each young-generation collection (scavenge) since the process started. */
interface GcLog {
  promoted: number[];
}

/**
 * Calls measured of each kind: enough for dozens of young collections (a submit allocates tens of
 * KiB); 30,000 each measured the same means at three times the run's CPU (G473).
 */
const CALLS = 10_000;

const PIC = { model: 'pic-2', prompt: 'a red fox', resolution: '2k', size: '16:9' };

/**
 * `amount` calls of `url` (a POST of `json` when given, else a GET) by 100 callers at once, each
 * sending its next when its last is answered (as autocannon does); the statuses other than 200.
 */
async function load(url: string, key: string, amount: number, json?: unknown): Promise<number[]> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 100 });
  const refused: number[] = [];
  let left = amount;
  const caller = async (): Promise<void> => {
    while (left > 0) {
      left--;
      const { status } = await httpCall(url, { agent, key, ...(json !== undefined && { json }) });
      if (status !== 200) refused.push(status);
    }
  };
  await Promise.all(Array.from({ length: 100 }, caller));
  agent.destroy();
  return refused;
}

/** Mean KiB promoted per young collection in `promoted`, after checking there were enough of them to judge. */
function meanKiB(promoted: number[]): number {
  // 10,000 calls allocate far more than the young generation holds: it was collected many times
  expect(promoted.length).toBeGreaterThanOrEqual(5);
  expect(promoted.every(Number.isFinite)).toBe(true);
  return promoted.reduce((a, b) => a + b, 0) / promoted.length / 1024;
}

const listed = (promoted: number[]): string => `promoted per young collection, KiB: ${promoted.map((b) => Math.round(b / 1024)).join(', ')}`;

describe('what a request leaves behind (G426)', () => {
  it('young collections promote almost nothing while 100 connections submit, then poll', async () => {
    // the benchmark's gateway: workers off (tasks stay queued), logs silent, rate limits lifted
    const child = spawn(process.execPath, ['--trace-gc-nvp', path.join(ROOT, 'bench', 'gateway-server.js')], {
      cwd: ROOT,
      env: process.env,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      const gc: GcLog = { promoted: [] };
      const started = new Promise<{ port: number; key: string; taskId: string }>((resolve, reject) => {
        child.once('exit', (code) => reject(new Error(`gateway exited (${code})`)));
        readline.createInterface({ input: child.stdout }).on('line', (line) => {
          if (line.startsWith('{"port"')) resolve(JSON.parse(line) as { port: number; key: string; taskId: string });
          else if (line.includes(' gc=s ')) gc.promoted.push(Number(/ promoted=(\d+)/.exec(line)?.[1] ?? Number.NaN));
        });
      });
      const { port, key, taskId } = await started;
      const submitUrl = `http://127.0.0.1:${port}/v1/pic/images`;
      const pollUrl = `http://127.0.0.1:${port}/v1/result/${taskId}`;
      // code optimised, pools and caches filled
      expect(await load(submitUrl, key, 3000, PIC)).toEqual([]);
      expect(await load(pollUrl, key, 3000)).toEqual([]);
      let from = gc.promoted.length;
      expect(await load(submitUrl, key, CALLS, PIC)).toEqual([]);
      const submits = gc.promoted.slice(from);
      from = gc.promoted.length;
      expect(await load(pollUrl, key, CALLS)).toEqual([]);
      const polls = gc.promoted.slice(from);
      // measured: ~5 KiB per collection for submits (~1,500 KiB with a Set of the replies under way), ~0 for polls
      expect(meanKiB(submits), listed(submits)).toBeLessThan(200);
      expect(meanKiB(polls), listed(polls)).toBeLessThan(200);
    } finally {
      child.kill('SIGTERM');
    }
  }, 120_000);
});
