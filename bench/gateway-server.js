// The gateway under benchmark, as a child process of bench/run.js. Starts the compiled gateway
// (dist/, so run `npm run build` or `node bin/mediagate.js build` first) on 127.0.0.1, port 0, with
// a fresh temporary data directory, silent logs and a random bootstrap key; creates one task whose
// id the poll benchmark queries; prints one line `{"port":N,"key":"...","taskId":"..."}` on stdout.
//
// MEDIAGATE_WORKERS defaults to 0 here: no in-process worker renders images, so the HTTP path is
// measured alone (submitted tasks just stay queued). Set BENCH_GATEWAY_WORKERS=1 to override.
//
// BENCH_GATEWAY_CONFIG=default runs the configuration `npm start` runs instead (workers on, JSON
// logs at info on stdout, sandbox timing `fast`); only the per-key rate limits and the in-flight
// bound are lifted, since the benchmark drives one key far past them. The startup line then goes
// to file descriptor 3 (stdout carries the logs; bench/run.js sends them to a file).
// For a CPU profile start this script with `node --cpu-prof --cpu-prof-dir=DIR` (run.js does so
// when BENCH_CPU_PROF=1); the profile is written when the process exits after SIGTERM.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * The startup line this script prints (bench/run.js, bench/chat.js and bench/long-poll.js read it).
 * @typedef {{ port: number, key: string, taskId: string, dataDir: string }} StartupLine
 */

// The compiled gateway, typed as its source (dist/ is src/ compiled). Imported by URL, which the
// type checker does not follow, so checking bench/ needs no build and never reads dist/; at run
// time it loads the same module `import ... from '../dist/main/serve.js'` would.
const { startServer } = /** @type {typeof import('../src/main/serve.js')} */ (await import(new URL('../dist/main/serve.js', import.meta.url).href));

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mediagate-bench-'));
const key = `bench_${randomBytes(24).toString('base64url')}`;

const defaultConfig = process.env.BENCH_GATEWAY_CONFIG === 'default';
const quiet = { MEDIAGATE_LOG_LEVEL: 'silent', MEDIAGATE_WORKERS: process.env.BENCH_GATEWAY_WORKERS ?? '0', MEDIAGATE_SANDBOX_TIMING: 'instant' };
const server = await startServer({
  ...process.env,
  PORT: '0',
  HOST: '127.0.0.1',
  MEDIAGATE_DATA_DIR: dataDir,
  ...(!defaultConfig && quiet),
  MEDIAGATE_BOOTSTRAP_KEY: key,
  MEDIAGATE_RATE_LIMIT: 'off', // the benchmark drives one key far past any sane limit
  MEDIAGATE_MAX_TASKS_IN_FLIGHT: '0', // and leaves ~100,000 tasks queued (workers off)
});
/**
 * Where the startup line goes: stdout, or descriptor 3 when stdout carries the logs.
 * @param {string} line
 */
const announce = (line) => (defaultConfig ? fs.writeSync(3, line) : process.stdout.write(line));

let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  server
    .close()
    .catch((err) => console.error('gateway-server: close failed', err))
    .finally(() => {
      fs.rmSync(dataDir, { recursive: true, force: true });
      process.exit(0); // a normal exit, so --cpu-prof writes its profile
    });
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);

try {
  const res = await fetch(`${server.url}/v1/pic/images`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'pic-2', prompt: 'a red fox', resolution: '2k', size: '16:9' }),
  });
  const body = /** @type {{ id?: unknown } | null} */ (await res.json());
  if (res.status !== 200 || typeof body?.id !== 'string') throw new Error(`task create answered ${res.status}: ${JSON.stringify(body)}`);
  const port = Number(new URL(server.url).port);
  /** @type {StartupLine} */
  const line = { port, key, taskId: body.id, dataDir };
  announce(`${JSON.stringify(line)}\n`);
} catch (err) {
  console.error('gateway-server: setup failed', err);
  stop();
}
