#!/usr/bin/env node
// Callers for scripts/container-check.sh's rolling restart (issue 28, G352): LOOPS loops that each
// submit a task (videos of 8 s and pictures in turn) and long-poll it until it ends, then the next,
// without pause, until the file DIR/stop appears; then they only long-poll what was accepted until
// every task has ended. A connection per request (as nginx in front of the gateways does, G341): a
// refused connection (the gateway is down: nothing was sent) is tried again 250 ms later; every
// other outcome than a 2xx reply (a 5xx, a 4xx, a reset, an empty reply) is a failure. Requests
// under way when DIR/signal appears (the check's SIGTERM) are counted with what they got.
// Writes DIR/summary.json and prints it on one line.
//   node scripts/container-load.js BASE_URL API_KEY DIR [LOOPS]
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';

const [base, key, dir, loopsArg] = process.argv.slice(2);
if (!base || !key || !dir) {
  console.error('usage: node scripts/container-load.js BASE_URL API_KEY DIR [LOOPS]');
  process.exit(2);
}
const LOOPS = Number(loopsArg ?? 8);
const TERMINAL = ['completed', 'failed', 'cancelled'];
const stopped = () => fs.existsSync(path.join(dir, 'stop'));
const signalled = () => fs.existsSync(path.join(dir, 'signal'));
/** @param {number} ms */
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const summary = {
  requests: 0,
  /** @type {Record<string, number>} replies by HTTP status */
  statuses: {},
  refused: 0,
  /** @type {string[]} */
  failures: [],
  /** requests sent before the signal and answered after it, by kind */
  atSignal: { submits: 0, polls: 0 },
  /** @type {Record<string, string>} task id -> its last status */
  tasks: {},
};

/**
 * How a call ended: answered, refused (nothing was sent), or failed otherwise (the message names
 * the request: never empty, so `if (r.error)` leaves only the other two).
 * @typedef {{ status: number, text: string, refused?: undefined, error?: undefined }
 *   | { refused: true, error?: undefined }
 *   | { error: `${string}: ${string}`, refused?: undefined }} Outcome
 */

/**
 * One request on a connection of its own; resolves with the reply, or { refused: true } when nothing was sent.
 * @param {'GET' | 'POST'} method
 * @param {string} url the path (after BASE_URL)
 * @param {string} [body] JSON
 * @returns {Promise<Outcome>}
 */
function call(method, url, body) {
  return new Promise((resolve) => {
    const before = signalled();
    const req = http.request(
      `${base}${url}`,
      { method, agent: false, headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) }, timeout: 90_000 },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d) => {
          text += d;
        });
        res.on('end', () => {
          if (!before && signalled()) summary.atSignal[method === 'POST' ? 'submits' : 'polls']++;
          resolve({ status: res.statusCode ?? 0, text });
        });
        res.on('error', (err) => resolve({ error: `${method} ${url}: reply cut: ${err.message}` }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('no reply within 90 s')));
    req.on('error', (/** @type {NodeJS.ErrnoException} */ err) =>
      resolve(err.code === 'ECONNREFUSED' ? { refused: true } : { error: `${method} ${url}: ${err.code ?? ''} ${err.message}` }),
    );
    req.end(body);
  });
}

/**
 * A request until it is answered (refused connections tried again); undefined when it failed otherwise.
 * @param {'GET' | 'POST'} method
 * @param {string} url the path (after BASE_URL)
 * @param {string} [body] JSON
 */
async function request(method, url, body) {
  for (;;) {
    const r = await call(method, url, body);
    if (r.refused) {
      summary.refused++;
      await sleep(250);
      continue;
    }
    summary.requests++;
    if (r.error) {
      summary.failures.push(r.error);
      return undefined;
    }
    summary.statuses[r.status] = (summary.statuses[r.status] ?? 0) + 1;
    if (r.status < 200 || r.status > 299) {
      summary.failures.push(`${method} ${url}: ${r.status} ${r.text.slice(0, 200)}`);
      return undefined;
    }
    return JSON.parse(r.text);
  }
}

/**
 * Long-polls a task until it ends (or, while the load runs, until `whileRunning` says stop).
 * @param {string} id
 * @param {boolean} whileRunning
 */
async function follow(id, whileRunning) {
  while (!TERMINAL.includes(summary.tasks[id] ?? '') && (!whileRunning || !stopped())) {
    const reply = await request('GET', `/v1/result/${id}?wait=5`);
    if (!reply) return;
    summary.tasks[id] = reply.status;
  }
}

/** @param {number} n the loop's number (which kind it submits first) */
async function loop(n) {
  for (let i = 0; !stopped(); i++) {
    const video = (n + i) % 2 === 0;
    const reply = video
      ? await request('POST', '/v1/videos/videos', JSON.stringify({ model: 'videos_fast', prompt: `rolling ${n}.${i}`, duration: 8 }))
      : await request('POST', '/v1/pic/images', JSON.stringify({ model: 'pic', prompt: `rolling ${n}.${i}`, size: '16:9' }));
    const id = video ? reply?.data?.projectId : reply?.id;
    if (!id) {
      await sleep(250);
      continue;
    }
    summary.tasks[id] = 'accepted';
    await follow(id, true);
  }
}

await Promise.all(Array.from({ length: LOOPS }, (_, n) => loop(n)));
// the load has stopped: every accepted task is followed to its end
await Promise.all(Object.keys(summary.tasks).map((id) => follow(id, false)));
fs.writeFileSync(path.join(dir, 'summary.json'), JSON.stringify(summary));
const accepted = Object.keys(summary.tasks).length;
const completed = Object.values(summary.tasks).filter((s) => s === 'completed').length;
console.log(
  `load: ${summary.requests} requests answered (by status: ${JSON.stringify(summary.statuses)}), ${summary.refused} refused connections tried again, ` +
    `${summary.failures.length} failed; answered across the signal: ${summary.atSignal.submits} submits, ${summary.atSignal.polls} long-polls; ` +
    `${accepted} tasks accepted, ${completed} completed`,
);
for (const f of summary.failures.slice(0, 10)) console.log(`  failure: ${f}`);
