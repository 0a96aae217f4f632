// A light upstream that speaks the interface's video families, for bench/relay.js and the relay
// provider's tests: cheap enough for 10,000 tasks in flight (a task is one object; its status is
// computed from the clock when asked, no timer per task).
//
//   POST {power}/v1/motion/videos      motion create (model, content)
//   POST {base}/v1/videos/videos       videos create (model, prompt) -> {code: "0", msg: null, data: {projectId}}
//   POST {base}/clip/videos            clip create, Form B by model (else Form A; prompt)
//   POST {power}/v1/motion/videos/{id}/cancel
//   GET  {base}/v1/result/{id}, {power}/v1/result/{id}   the family's query reply
//   GET  /files/{id}.mp4               the result: one small real MP4 (bench/tiny-mp4.js)
//   GET  /__stats[?tasks=1]            counters (bench/fake-upstream-stats.js)
//   POST /__finish/{id}                finish a task now (tests: no waiting on the clock)
//
// A task is `queued` for the first fifth of its time, then `processing` (progress rising), then
// `completed` `finishMs` after its create (`failed` when the prompt contains `[fail]`). Creates
// honour `Idempotency-Key` (with the bearer key): a repeat answers the same task (header
// `Idempotent-Replayed: true`) and is counted; the key on another create path is a 409. Every API
// call needs `Authorization: Bearer ...` (the given `apiKey`, when one is set). Errors use the
// interface's bodies: `{error: {message, type, param, code}}`, the videos create `{code, msg, data: null}`.
//
// CLI: `node bench/fake-upstream.js` (BENCH_UPSTREAM_FINISH_MS, BENCH_UPSTREAM_KEY) prints `{"port":N}`.
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { taskStats, upstreamStats } from './fake-upstream-stats.js';
import { TINY_MP4_SECONDS, tinyMp4 } from './tiny-mp4.js';

/** @typedef {import('./fake-upstream-stats.js').FakeTask} FakeTask */

/**
 * @typedef {object} FakeUpstreamOptions
 * @property {number} [finishMs] create to finish (default BENCH_UPSTREAM_FINISH_MS, else 3000)
 * @property {string} [apiKey] when set, the only bearer key accepted (else any)
 * @property {{ base?: string, power?: string }} [prefixes] `{base_url}` and `{power_base_url}` path prefixes (default '')
 * @property {number} [port] default 0
 */

/**
 * @typedef {object} FakeUpstream
 * @property {string} url its origin, `http://127.0.0.1:PORT`
 * @property {number} port
 * @property {Map<string, FakeTask>} tasks
 * @property {() => ReturnType<typeof upstreamStats>} stats
 * @property {() => Promise<void>} close
 */

const CLIP_FORM_B = new Set(['clip_3_1_fast_stable', 'clip_3_1_pro_stable', 'clip_3_1_fast', 'clip_3_1_pro']);
const FAIL_MARKER = '[fail]';

/** An error with its HTTP status, code and field, rendered in the route's error body. */
class FakeError extends Error {
  /** @param {number} status @param {string} code @param {string} message @param {string | null} [param] */
  constructor(status, code, message, param = null) {
    super(message);
    this.status = status;
    this.code = code;
    this.param = param;
  }
}

/** @param {number} status */
const errorType = (status) =>
  ({ 400: 'invalid_request_error', 401: 'authentication_error', 404: 'not_found_error', 409: 'conflict_error' })[status] ?? 'server_error';

/** @param {unknown} v */
const nonEmptyString = (v) => typeof v === 'string' && v.length > 0;

/**
 * The task a create body asks for (family, form, model), or a 400 naming the field.
 * @param {'motion' | 'videos' | 'clip'} family
 * @param {Record<string, unknown>} body
 * @returns {{ object: 'video' | 'video.generation', model: string, fails: boolean }}
 */
function planTask(family, body) {
  if (family === 'clip') {
    if (!nonEmptyString(body.prompt)) throw new FakeError(400, 'invalid_request', 'prompt is required', 'prompt');
    const model = body.model === undefined ? 'clip3.1-fast' : String(body.model);
    return { object: CLIP_FORM_B.has(model) ? 'video' : 'video.generation', model, fails: String(body.prompt).includes(FAIL_MARKER) };
  }
  if (!nonEmptyString(body.model)) throw new FakeError(400, 'invalid_request', 'model is required', 'model');
  const model = String(body.model);
  if (family === 'videos') {
    if (!nonEmptyString(body.prompt)) throw new FakeError(400, 'invalid_request', 'prompt is required', 'prompt');
    return { object: 'video', model, fails: String(body.prompt).includes(FAIL_MARKER) };
  }
  if (!Array.isArray(body.content) || body.content.length === 0)
    throw new FakeError(400, 'invalid_request', 'content is required (at least one item)', 'content');
  const text = body.content.map((c) => (c !== null && typeof c === 'object' && 'text' in c ? String(c.text) : '')).join(' ');
  return { object: 'video', model, fails: text.includes(FAIL_MARKER) };
}

/**
 * @param {FakeUpstreamOptions} [options]
 * @returns {Promise<FakeUpstream>}
 */
export async function startFakeUpstream(options = {}) {
  const finishAfterMs = options.finishMs ?? Number(process.env.BENCH_UPSTREAM_FINISH_MS ?? 3000);
  const base = options.prefixes?.base ?? '';
  const power = options.prefixes?.power ?? '';
  const video = await tinyMp4();
  /** @type {Map<string, FakeTask>} */
  const tasks = new Map();
  /** @type {Map<string, string>} bearer key + Idempotency-Key -> task id */
  const keys = new Map();
  const counters = { creates: 0, duplicateCreates: 0, conflicts: 0, rejected: 0, unknownQueries: 0, cancels: 0 };
  /** @type {Record<string, 'motion' | 'videos' | 'clip'>} */
  const createRoutes = { [`${power}/v1/motion/videos`]: 'motion', [`${base}/v1/videos/videos`]: 'videos', [`${base}/clip/videos`]: 'clip' };
  const queryPrefixes = [...new Set([`${base}/v1/result/`, `${power}/v1/result/`])];
  const cancelRoute = new RegExp(`^${power.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/v1/motion/videos/([^/]+)/cancel$`);
  let seq = 0;
  let origin = '';

  /** @param {FakeTask} t @param {number} now */
  function statusOf(t, now) {
    if (t.cancelled) return { status: 'cancelled', progress: 100 };
    if (now >= t.finishMs) return { status: t.fails ? 'failed' : 'completed', progress: 100 };
    const span = t.finishMs - t.createdMs;
    if (now < t.createdMs + span / 5) return { status: 'queued', progress: 0 };
    return { status: 'processing', progress: Math.min(99, Math.floor((100 * (now - t.createdMs)) / span)) };
  }

  /** @param {FakeTask} t @param {number} now */
  function queryReply(t, now) {
    const { status, progress } = statusOf(t, now);
    const done = status === 'completed';
    const reply = {
      id: t.id,
      object: t.object,
      created: t.createdUnix,
      model: t.model,
      status,
      progress,
      video_url: done ? `${origin}/files/${t.id}.mp4` : null,
      error: status === 'failed' ? `fake upstream: the prompt contains ${FAIL_MARKER}` : null,
    };
    if (t.family !== 'clip') return { ...reply, actualDuration: done ? TINY_MP4_SECONDS : null };
    return done ? { ...reply, actualDuration: TINY_MP4_SECONDS } : reply;
  }

  /** @param {FakeTask} t */
  function createReply(t) {
    if (t.family === 'videos') return { code: '0', msg: null, data: { projectId: t.id } };
    const reply = { id: t.id, object: t.object, created: t.createdUnix, model: t.model, status: 'queued', progress: 0 };
    return t.family === 'motion' ? { ...reply, video_url: null, error: null } : { ...reply, error: null };
  }

  /** @param {string} path @param {'motion' | 'videos' | 'clip'} family @param {http.IncomingMessage} req @param {string} text */
  function create(path, family, req, text) {
    /** @type {unknown} */
    let body;
    try {
      body = JSON.parse(text);
    } catch {
      throw new FakeError(400, 'invalid_json', 'The body is not valid JSON');
    }
    if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new FakeError(400, 'invalid_json', 'The request body must be a JSON object');
    const plan = planTask(family, /** @type {Record<string, unknown>} */ (body));
    const key = req.headers['idempotency-key'];
    const keyOf = typeof key === 'string' ? `${req.headers.authorization}\n${key}` : undefined;
    const known = keyOf === undefined ? undefined : tasks.get(keys.get(keyOf) ?? '');
    if (known !== undefined) {
      if (known.route !== path) {
        counters.conflicts++;
        throw new FakeError(409, 'idempotency_key_reused', 'The Idempotency-Key was used with another endpoint');
      }
      known.creates++;
      counters.creates++;
      counters.duplicateCreates++;
      return { task: known, replayed: true };
    }
    const now = performance.now();
    const id = `up_${(++seq).toString(36).padStart(6, '0')}`;
    /** @type {FakeTask} */
    const task = {
      id,
      family,
      object: plan.object,
      model: plan.model,
      route: path,
      createdUnix: Math.floor(Date.now() / 1000),
      createdMs: now,
      finishMs: now + finishAfterMs,
      fails: plan.fails,
      cancelled: false,
      creates: 1,
      queryMs: [],
      seenFinishedMs: undefined,
      downloads: 0,
    };
    tasks.set(id, task);
    if (keyOf !== undefined) keys.set(keyOf, id);
    counters.creates++;
    return { task, replayed: false };
  }

  /** @param {string} id */
  function taskOr404(id) {
    const t = tasks.get(id);
    if (t === undefined) throw new FakeError(404, 'task_not_found', `No task with id ${id}`, 'id');
    return t;
  }

  /** @param {http.IncomingMessage} req */
  function checkAuth(req) {
    const auth = req.headers.authorization;
    if (auth === undefined || !auth.startsWith('Bearer ')) throw new FakeError(401, 'missing_api_key', 'No Authorization: Bearer <key> header was sent');
    if (options.apiKey !== undefined && auth !== `Bearer ${options.apiKey}`) throw new FakeError(401, 'invalid_api_key', 'The bearer key is unknown');
  }

  /** @param {http.ServerResponse} res @param {number} status @param {unknown} json @param {Record<string, string>} [headers] */
  const sendJson = (res, status, json, headers = {}) => {
    const text = JSON.stringify(json);
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), ...headers }).end(text);
  };

  /** @param {http.IncomingMessage} req @param {http.ServerResponse} res @param {string} path @param {string} query @param {string} text */
  function route(req, res, path, query, text) {
    const now = performance.now();
    if (req.method === 'GET' && path === '/__stats') {
      const stats = upstreamStats(tasks.values(), counters, now, finishAfterMs);
      sendJson(res, 200, /\btasks=1\b/.test(query) ? { ...stats, perTask: [...tasks.values()].map(taskStats) } : stats);
      return;
    }
    if (req.method === 'POST' && path.startsWith('/__finish/')) {
      const t = taskOr404(decodeURIComponent(path.slice('/__finish/'.length)));
      if (now < t.finishMs) t.finishMs = now;
      sendJson(res, 200, queryReply(t, now));
      return;
    }
    if ((req.method === 'GET' || req.method === 'HEAD') && path.startsWith('/files/') && path.endsWith('.mp4')) {
      const t = tasks.get(decodeURIComponent(path.slice('/files/'.length, -'.mp4'.length)));
      if (t === undefined || statusOf(t, now).status !== 'completed') throw new FakeError(404, 'result_not_found', 'No such result file');
      t.downloads++;
      res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': video.length }).end(video);
      return;
    }
    checkAuth(req);
    const family = req.method === 'POST' ? createRoutes[path] : undefined;
    if (family !== undefined) {
      const { task, replayed } = create(path, family, req, text);
      sendJson(res, 200, createReply(task), replayed ? { 'idempotent-replayed': 'true' } : {});
      return;
    }
    const queried = req.method === 'GET' ? queryPrefixes.find((p) => path.startsWith(p)) : undefined;
    if (queried !== undefined) {
      const t = tasks.get(decodeURIComponent(path.slice(queried.length)));
      if (t === undefined) {
        counters.unknownQueries++;
        throw new FakeError(404, 'task_not_found', 'No task with this id', 'id');
      }
      t.queryMs.push(now);
      if (t.seenFinishedMs === undefined && !t.cancelled && now >= t.finishMs) t.seenFinishedMs = now;
      sendJson(res, 200, queryReply(t, now));
      return;
    }
    const cancel = req.method === 'POST' ? cancelRoute.exec(path) : null;
    if (cancel !== null) {
      const t = taskOr404(decodeURIComponent(/** @type {string} */ (cancel[1])));
      if (t.family !== 'motion' || statusOf(t, now).progress === 100) throw new FakeError(409, 'invalid_task_state', `Task ${t.id} cannot be cancelled now`);
      t.cancelled = true;
      counters.cancels++;
      sendJson(res, 200, queryReply(t, now));
      return;
    }
    throw new FakeError(404, 'route_not_found', `No endpoint ${req.method} ${path}`);
  }

  const server = http.createServer((req, res) => {
    /** @type {Buffer[]} */
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const [path = '/', query = ''] = (req.url ?? '/').split('?', 2);
      try {
        route(req, res, path, query, Buffer.concat(chunks).toString('utf8'));
      } catch (thrown) {
        // A fault of the fake itself is a 500 (and said on stderr), never a dead benchmark.
        if (!(thrown instanceof FakeError)) console.error('fake-upstream:', thrown);
        const err = thrown instanceof FakeError ? thrown : new FakeError(500, 'internal_error', `fake upstream fault: ${String(thrown)}`);
        if (err.status === 400 || err.status === 401) counters.rejected++;
        const videosCreate = req.method === 'POST' && createRoutes[path] === 'videos';
        sendJson(
          res,
          err.status,
          videosCreate
            ? { code: String(err.status), msg: err.message, data: null }
            : { error: { message: err.message, type: errorType(err.status), param: err.param, code: err.code } },
        );
      }
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise((resolve) => server.listen(options.port ?? 0, '127.0.0.1', () => resolve(undefined)));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error(`fake-upstream: not listening on TCP (${address})`);
  origin = `http://127.0.0.1:${address.port}`;
  return {
    url: origin,
    port: address.port,
    tasks,
    stats: () => upstreamStats(tasks.values(), counters, performance.now(), finishAfterMs),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve(undefined));
      }),
  };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const upstream = await startFakeUpstream({ ...(process.env.BENCH_UPSTREAM_KEY && { apiKey: process.env.BENCH_UPSTREAM_KEY }) });
  process.stdout.write(`${JSON.stringify({ port: upstream.port })}\n`);
  for (const sig of ['SIGTERM', 'SIGINT'])
    process.on(sig, () => {
      void upstream.close().then(() => process.exit(0));
    });
}
