/**
 * A fake of the fal queue API on 127.0.0.1 (port 0), from fal's queue reference and the
 * `@fal-ai/client` source (queue.js, request.js, response.js):
 * - `POST /{owner}/{alias}[/{sub-path}]` (auth `Authorization: Key <key>`, else 401 `{detail}`;
 *   an unknown model 404) -> 200 `{request_id, response_url, status_url, cancel_url,
 *   queue_position}`; the URLs are `/{owner}/{alias}/requests/{id}[/status|/cancel]`: they drop
 *   the sub-path (a URL built with it is 404, the trap), and `x-fal-request-id` on every answer.
 * - `GET status_url[?logs=1]`: 202 `IN_QUEUE` with `queue_position` (one less per look), 202
 *   `IN_PROGRESS` (`logs`), 200 `COMPLETED` (`logs`, `metrics`; `error`, `error_type` when it failed).
 * - `GET response_url`: 400 while not completed; the model's output `{images: [...]}` / `{video}`
 *   with CDN-like file URLs (`/files/...`, no auth), or the model's error: 422 `{detail: [{loc,
 *   msg, type}]}` for an input it refuses (validated when it runs, not at submit), 422
 *   `content_policy_violation` for a prompt with `[nsfw]`, 500 for `[crash]`; an image model's
 *   safety checker (`enable_safety_checker`, on unless sent false) fails nothing: for
 *   `[nsfw-output]` it answers 200 with black images and `has_nsfw_concepts: [true, ...]`. With
 *   `sync_mode: true` the files are answered inline as `data:` URIs (nothing on the CDN).
 * - `PUT cancel_url`: 202 `CANCELLATION_REQUESTED`, or 400 `ALREADY_COMPLETED`.
 * - Prompt markers: `[queue:N]` starts at queue position N, `[hold]` stays IN_PROGRESS until
 *   cancelled. `expire(id)` forgets a request and its files (404 `Request not found`).
 *   `script(kind, ...)` makes the next calls of a kind answer a status (429 with `retry-after`,
 *   403 exhausted balance, 5xx) or reset the connection.
 * - A submit with `?fal_webhook=<url>` makes a request that runs on its own clock (a step every
 *   `tickMs`, not per look) and is told to that URL when it ends, signed as fal does
 *   (fal-webhooks.ts; the public keys at `GET /.well-known/jwks.json`, no auth).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import sharp from 'sharp';
import { video } from '../helpers/media-fixtures.js';
import { FAKE_FAL_MODELS, type FalValidationError } from './fal-models.js';
import { FalWebhooks } from './fal-webhooks.js';

export type CallKind = 'submit' | 'status' | 'result' | 'cancel';
export type FalScripted = { status: number; body: unknown; headers?: Record<string, string> } | 'reset';

interface FalRequest {
  id: string;
  /** `owner/alias`: what the returned URLs name. */
  app: string;
  model: string;
  input: Record<string, unknown>;
  position: number;
  state: 'IN_QUEUE' | 'IN_PROGRESS' | 'COMPLETED';
  hold: boolean;
  cancelled: boolean;
  outcome?: { status: number; body: unknown; errorType?: string };
  /** The submit's `fal_webhook`. */
  webhook?: string;
}

export interface RecordedSubmit {
  model: string;
  input: Record<string, unknown>;
  headers: http.IncomingHttpHeaders;
  requestId: string;
  /** The `fal_webhook` query parameter, if any. */
  webhook?: string;
}

export interface FakeFal {
  /** The queue URL: `http://127.0.0.1:<port>`. */
  baseUrl: string;
  apiKey: string;
  submits: RecordedSubmit[];
  /** Calls by kind, in order (`status <id>`, `result <id>`, `cancel <id>`). */
  calls: string[];
  /** Calls to a URL the fake does not serve (a status URL built with the model's sub-path, ...). */
  notFound: string[];
  script(kind: CallKind, ...answers: FalScripted[]): void;
  expire(requestId: string): void;
  state(requestId: string): FalRequest['state'] | undefined;
  /** Lets a `[hold]` request finish at the next look. */
  release(requestId: string): void;
  /** The webhooks of requests that named one: the signing key, what was sent, how (`mode`). */
  webhooks: FalWebhooks;
  /** Where the fake publishes its webhook keys. */
  jwksUrl: string;
  /** Ms between the steps of a request that named a webhook (default 20). */
  tickMs: number;
  close(): Promise<void>;
}

export const exhaustedBalance: FalScripted = {
  status: 403,
  body: { detail: 'User is locked. Reason: Exhausted balance. Top up your balance at fal.ai/dashboard/billing.' },
};
export const rateLimited = (retryAfter: string): FalScripted => ({
  status: 429,
  headers: { 'retry-after': retryAfter },
  body: { detail: 'Rate limit exceeded' },
});

async function readBody(req: http.IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  for await (const c of req) parts.push(c as Buffer);
  return Buffer.concat(parts).toString('utf8');
}

export async function startFakeFal(apiKey = `fal-key-${randomBytes(8).toString('hex')}:${randomBytes(8).toString('hex')}`): Promise<FakeFal> {
  const requests = new Map<string, FalRequest>();
  const files = new Map<string, { type: string; bytes: Buffer }>();
  const submits: RecordedSubmit[] = [];
  const calls: string[] = [];
  const notFound: string[] = [];
  const scripted: Record<CallKind, FalScripted[]> = { submit: [], status: [], result: [], cancel: [] };
  let origin = '';
  const webhooks = new FalWebhooks();
  const clocks = new Set<NodeJS.Timeout>();
  const timing = { tickMs: 20, closed: false };

  /** A request with a webhook runs on its own clock (a step every tickMs), and is told to the webhook when it ends. */
  function runOnItsOwn(r: FalRequest): void {
    if (timing.closed) return;
    const clock = setTimeout(() => {
      clocks.delete(clock);
      void advance(r).then(() => {
        if (r.state !== 'COMPLETED') return runOnItsOwn(r);
        webhooks.deliver(r.webhook!, r.id, r.outcome!);
      });
    }, timing.tickMs);
    clocks.add(clock);
  }

  const urlsOf = (r: FalRequest) => ({
    response_url: `${origin}/${r.app}/requests/${r.id}`,
    status_url: `${origin}/${r.app}/requests/${r.id}/status`,
    cancel_url: `${origin}/${r.app}/requests/${r.id}/cancel`,
  });

  /** Runs the model: its validation, then what it makes. */
  async function run(r: FalRequest): Promise<void> {
    const model = FAKE_FAL_MODELS[r.model]!;
    const prompt = String(r.input.prompt ?? '');
    if (r.cancelled) {
      r.outcome = { status: 400, body: { detail: 'Request was cancelled' }, errorType: 'request_cancelled' };
      return;
    }
    const invalid: FalValidationError[] = model.validate(r.input);
    if (invalid.length > 0) {
      r.outcome = { status: 422, body: { detail: invalid } };
      return;
    }
    if (prompt.includes('[nsfw]')) {
      r.outcome = {
        status: 422,
        body: {
          detail: [
            {
              loc: ['body', 'prompt'],
              msg: 'The content could not be processed because it contained material flagged by a content checker.',
              type: 'content_policy_violation',
              url: 'https://docs.fal.ai/errors#content_policy_violation',
            },
          ],
        },
      };
      return;
    }
    if (prompt.includes('[crash]')) {
      r.outcome = { status: 500, body: { detail: 'Internal Server Error' }, errorType: 'runner_server_error' };
      return;
    }
    const made = model.made(r.input);
    if (model.kind === 'image') {
      const n = typeof r.input.num_images === 'number' ? r.input.num_images : 1;
      // the safety checker (enable_safety_checker, on unless sent false) fails nothing: a flagged image is answered black, flagged in has_nsfw_concepts
      const flagged = prompt.includes('[nsfw-output]') && r.input.enable_safety_checker !== false;
      const background = flagged ? { r: 0, g: 0, b: 0 } : { r: 90, g: 40, b: 160 };
      const bytes = await sharp({ create: { width: made.width, height: made.height, channels: 3, background } })
        .png()
        .toBuffer();
      // `sync_mode: true`: the files come inline, as data URIs, and are not kept on the CDN
      const inline = r.input.sync_mode === true;
      const images = Array.from({ length: n }, (_, i) => {
        const path = `/files/${r.id}/${i}.png`;
        if (!inline) files.set(path, { type: 'image/png', bytes });
        const url = inline ? `data:image/png;base64,${bytes.toString('base64')}` : `${origin}${path}`;
        return { url, width: made.width, height: made.height, content_type: 'image/png' };
      });
      r.outcome = { status: 200, body: { images, timings: { inference: 1.2 }, seed: 42, has_nsfw_concepts: images.map(() => flagged), prompt } };
    } else {
      const bytes = await video(made.width, made.height, made.seconds ?? 1);
      const path = `/files/${r.id}/output.mp4`;
      const inline = r.input.sync_mode === true;
      if (!inline) files.set(path, { type: 'video/mp4', bytes });
      const url = inline ? `data:video/mp4;base64,${bytes.toString('base64')}` : `${origin}${path}`;
      r.outcome = { status: 200, body: { video: { url, content_type: 'video/mp4', file_name: 'output.mp4', file_size: bytes.length } } };
    }
  }

  /** One look moves the request along: queue position down, then in progress, then completed. */
  async function advance(r: FalRequest): Promise<void> {
    if (r.state === 'IN_QUEUE') {
      if (r.position > 0) r.position--;
      else r.state = 'IN_PROGRESS';
      return;
    }
    if (r.state === 'IN_PROGRESS' && (!r.hold || r.cancelled)) {
      await run(r);
      r.state = 'COMPLETED';
    }
  }

  const server = http.createServer(async (req, res) => {
    const send = (status: number, body: unknown, headers: Record<string, string> = {}): void => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify(body));
    };
    const url = new URL(req.url ?? '/', 'http://fake');
    const path = url.pathname;
    const file = files.get(path);
    if (req.method === 'GET' && path === '/.well-known/jwks.json') {
      send(200, webhooks.jwks());
      return;
    }
    if (req.method === 'GET' && path.startsWith('/files/')) {
      if (!file) {
        send(404, { detail: 'Not Found' });
        return;
      }
      res.writeHead(200, { 'content-type': file.type, 'content-length': String(file.bytes.length) });
      res.end(file.bytes);
      return;
    }
    if (req.headers.authorization !== `Key ${apiKey}`) {
      send(401, { detail: "Invalid Key Authorization header format. Expected '<key_id>:<key_secret>'." });
      return;
    }
    const m = /^\/([^/]+)\/([^/]+)\/requests\/([^/]+)(\/status|\/cancel)?$/.exec(path);
    const kind: CallKind | undefined =
      req.method === 'POST'
        ? 'submit'
        : m && req.method === 'GET' && m[4] === '/status'
          ? 'status'
          : m && req.method === 'GET' && m[4] === undefined
            ? 'result'
            : m && req.method === 'PUT' && m[4] === '/cancel'
              ? 'cancel'
              : undefined;
    if (!kind) {
      notFound.push(`${req.method} ${path}`);
      send(404, { detail: 'Not Found' });
      return;
    }
    const next = scripted[kind].shift();
    if (next === 'reset') {
      req.socket.destroy();
      return;
    }
    if (next) {
      send(next.status, next.body, next.headers);
      return;
    }

    if (kind === 'submit') {
      const model = path.slice(1);
      const body = await readBody(req);
      if (!FAKE_FAL_MODELS[model]) {
        send(404, { detail: `Application '${model.split('/')[1]}' not found` });
        return;
      }
      let input: Record<string, unknown>;
      try {
        input = JSON.parse(body) as Record<string, unknown>;
      } catch {
        send(422, { detail: [{ loc: ['body'], msg: 'Expecting value: line 1 column 1 (char 0)', type: 'value_error.jsondecode' }] });
        return;
      }
      const prompt = String(input.prompt ?? '');
      const webhook = url.searchParams.get('fal_webhook') ?? undefined;
      const r: FalRequest = {
        id: randomUUID(),
        app: model.split('/').slice(0, 2).join('/'),
        model,
        input,
        position: Number(/\[queue:(\d+)\]/.exec(prompt)?.[1] ?? 0),
        state: 'IN_QUEUE',
        hold: prompt.includes('[hold]'),
        cancelled: false,
        ...(webhook !== undefined && { webhook }),
      };
      requests.set(r.id, r);
      submits.push({ model, input, headers: req.headers, requestId: r.id, ...(webhook !== undefined && { webhook }) });
      send(200, { status: 'IN_QUEUE', request_id: r.id, gateway_request_id: r.id, ...urlsOf(r), queue_position: r.position }, { 'x-fal-request-id': r.id });
      if (webhook !== undefined) runOnItsOwn(r);
      return;
    }
    const r = requests.get(m![3]!);
    calls.push(`${kind} ${m![3]}`);
    if (!r || `${m![1]}/${m![2]}` !== r.app) {
      send(404, { detail: 'Request not found' });
      return;
    }
    const ids = { 'x-fal-request-id': r.id };
    if (kind === 'status') {
      const logs = url.searchParams.get('logs') === '1' ? [{ message: 'step', level: 'INFO', source: 'USER', timestamp: new Date().toISOString() }] : null;
      const answer = { status: r.state, request_id: r.id, ...urlsOf(r) };
      const position = r.position;
      if (r.webhook === undefined) await advance(r); // one with a webhook runs on its own clock
      if (answer.status === 'IN_QUEUE') send(202, { ...answer, queue_position: position }, ids);
      else if (answer.status === 'IN_PROGRESS') send(202, { ...answer, logs }, ids);
      else {
        const failed = r.outcome && r.outcome.status >= 300;
        send(
          200,
          {
            ...answer,
            logs,
            metrics: { inference_time: 1.2 },
            ...(failed && { error: 'Request failed', error_type: r.outcome!.errorType ?? 'validation_error' }),
          },
          ids,
        );
      }
      return;
    }
    if (kind === 'result') {
      if (r.state !== 'COMPLETED') {
        send(400, { detail: 'Request is still in progress' }, ids);
        return;
      }
      const o = r.outcome!;
      send(o.status, o.body, { ...ids, ...(o.errorType && { 'x-fal-error-type': o.errorType }) });
      return;
    }
    // cancel
    if (r.state === 'COMPLETED') {
      send(400, { status: 'ALREADY_COMPLETED' }, ids);
      return;
    }
    r.cancelled = true;
    if (r.state === 'IN_QUEUE') r.state = 'IN_PROGRESS';
    send(202, { status: 'CANCELLATION_REQUESTED' }, ids);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    baseUrl: origin,
    apiKey,
    submits,
    calls,
    notFound,
    script: (kind, ...answers) => {
      scripted[kind].push(...answers);
    },
    expire: (id) => {
      requests.delete(id);
      for (const k of [...files.keys()]) if (k.startsWith(`/files/${id}/`)) files.delete(k);
    },
    state: (id) => requests.get(id)?.state,
    release: (id) => {
      const r = requests.get(id);
      if (r) r.hold = false;
    },
    webhooks,
    jwksUrl: `${origin}/.well-known/jwks.json`,
    get tickMs() {
      return timing.tickMs;
    },
    set tickMs(ms: number) {
      timing.tickMs = ms;
    },
    close: async () => {
      timing.closed = true;
      for (const clock of clocks) clearTimeout(clock);
      await webhooks.settled();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
