/**
 * A fake of the Replicate predictions API on 127.0.0.1, port 0, from its HTTP reference and the
 * official `replicate` client (lib/predictions.js, lib/error.js, lib/util.js): bearer auth, problem+json
 * errors (`application/problem+json`, `{title, detail, status}`; 422 with `invalid_fields`), 404
 * for an unknown model, version or prediction, `POST /v1/models/{owner}/{name}/predictions` and
 * `POST /v1/predictions` (`version`) answering 201 with the prediction (`Prefer: wait` makes the
 * create block until the prediction ends: the trap a provider must avoid, counted in `preferWaits`),
 * `GET /v1/predictions/{id}`, `POST /v1/predictions/{id}/cancel` (200, the prediction).
 * A prediction moves one step per look, not per second: `starting`, then `processing` with tqdm
 * progress in `logs`, then `succeeded` with its output (flux-schnell: a list of image URLs; the
 * video model: one URL) served by the fake at `/files/...` until `expireFiles()` deletes them (404,
 * as Replicate does an hour after). Prompt markers: `[nsfw]` fails with the safety checker's error,
 * `[crash]` fails with a model error, `[forever]` never ends, `[hold]` leaves the create unanswered.
 * `script(...)` makes the next answers faults (a status with a problem body and headers, or a reset).
 * A create naming a `webhook` (and `webhook_events_filter`) makes a prediction that runs on its own
 * clock (a step every `tickMs`, not per look) and is told to the webhook as Replicate does
 * (replicate-webhooks.ts; the signing secret at `GET /v1/webhooks/default/secret`).
 */
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { image, video } from '../helpers/media-fixtures.js';
import { ReplicateWebhooks, WEBHOOK_EVENTS, type WebhookEvent } from './replicate-webhooks.js';

type InputRule = { type: 'string' | 'integer' | 'boolean' | 'uri'; required?: boolean; enum?: readonly (string | number)[] };
interface FakeModel {
  name: string;
  kind: 'image' | 'video';
  inputs: Record<string, InputRule>;
}

const ASPECTS = ['1:1', '16:9', '21:9', '3:2', '2:3', '4:5', '5:4', '3:4', '4:3', '9:16', '9:21'] as const;
export const FLUX_SCHNELL: FakeModel = {
  name: 'black-forest-labs/flux-schnell',
  kind: 'image',
  inputs: {
    prompt: { type: 'string', required: true },
    aspect_ratio: { type: 'string', enum: ASPECTS },
    num_outputs: { type: 'integer', enum: [1, 2, 3, 4] },
    output_format: { type: 'string', enum: ['webp', 'jpg', 'png'] },
    seed: { type: 'integer' },
    go_fast: { type: 'boolean' },
    megapixels: { type: 'string', enum: ['1', '0.25'] },
  },
};
export const VIDEO_VERSION = 'c8bcc4751328608bb75043b3af7bed4eabcf1a6c0a478d50a4cf57fa04bd5101';
export const VIDEO_MODEL: FakeModel = {
  name: 'minimax/video-01',
  kind: 'video',
  inputs: {
    prompt: { type: 'string', required: true },
    first_frame_image: { type: 'uri' },
    duration: { type: 'integer', enum: [6, 8, 10] },
    prompt_optimizer: { type: 'boolean' },
  },
};

export interface FakePrediction {
  id: string;
  model: string;
  version: string;
  input: Record<string, unknown>;
  status: 'starting' | 'processing' | 'succeeded' | 'failed' | 'canceled';
  looks: number;
  output: unknown;
  error: string | null;
  logs: string;
  /** The create's `webhook` and the events it asked for. */
  webhook?: { url: string; events: readonly WebhookEvent[] };
}

export type ScriptedAnswer = { status: number; title: string; detail: string; headers?: Record<string, string> } | 'reset';

export const PAYMENT_REQUIRED: ScriptedAnswer = {
  status: 402,
  title: 'Insufficient credit',
  detail:
    'You have insufficient credit to run this model. Go to https://replicate.com/account/billing#billing to purchase credit. Once you purchase credit, please wait a few minutes before trying again.',
};
export const throttled = (seconds: number): ScriptedAnswer => ({
  status: 429,
  title: 'Request was throttled',
  detail: `Request was throttled. Expected available in ${seconds} second${seconds === 1 ? '' : 's'}.`,
  headers: { 'retry-after': String(seconds) },
});
export const SERVER_ERROR: ScriptedAnswer = { status: 500, title: 'Internal Server Error', detail: 'Something went wrong on our end. Please try again.' };

export interface FakeReplicate {
  /** `http://127.0.0.1:<port>/v1` */
  baseUrl: string;
  apiKey: string;
  predictions: Map<string, FakePrediction>;
  /** Creates answered (201), in order: what a test counts. */
  creates: FakePrediction[];
  cancels: string[];
  /** Creates that came with `Prefer: wait` (a provider must send none). */
  preferWaits: number;
  /** Every request: method, path and headers. */
  requests: Array<{ method: string; path: string; headers: http.IncomingHttpHeaders }>;
  script(...answers: ScriptedAnswer[]): void;
  /** Deletes every output file (Replicate's hour is up): their URLs answer 404. */
  expireFiles(): void;
  /** The next `n` predictions to succeed name files already deleted (a re-host after the hour). */
  loseFilesOfNext(n: number): void;
  /** Looks a prediction takes to end (default 3: starting, processing, processing 50%, succeeded). */
  steps: number;
  /** The webhooks of predictions that named one: the account's secret, what was sent, how (`mode`). */
  webhooks: ReplicateWebhooks;
  /** Ms between the steps of a prediction that named a webhook (default 20). */
  tickMs: number;
  close(): Promise<void>;
}

function problem(
  res: http.ServerResponse,
  status: number,
  title: string,
  detail: string,
  extra: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/problem+json', ...headers });
  res.end(JSON.stringify({ title, detail, status, ...extra }));
}

/** Cog's validation of an input against the model's schema: `invalid_fields` as the API lists them. */
function invalidFields(model: FakeModel, input: Record<string, unknown>): Array<{ type: string; field: string; description: string }> {
  const out: Array<{ type: string; field: string; description: string }> = [];
  for (const [name, rule] of Object.entries(model.inputs)) {
    const v = input[name];
    if (v === undefined) {
      if (rule.required) out.push({ type: 'required', field: 'input', description: `${name} is required` });
      continue;
    }
    const okType = rule.type === 'integer' ? Number.isInteger(v) : rule.type === 'boolean' ? typeof v === 'boolean' : typeof v === 'string';
    if (!okType) out.push({ type: 'invalid_type', field: `input.${name}`, description: `Invalid type. Expected: ${rule.type}, given: ${typeof v}` });
    else if (rule.type === 'uri' && !/^https?:\/\//.test(String(v)))
      out.push({ type: 'format', field: `input.${name}`, description: "Does not match format 'uri'" });
    else if (rule.enum && !rule.enum.includes(v as string | number))
      out.push({
        type: 'enum',
        field: `input.${name}`,
        description: `${name} must be one of the following: ${rule.enum.map((e) => JSON.stringify(e)).join(', ')}`,
      });
  }
  return out;
}

/** flux-schnell's size at 1 megapixel for an aspect ratio (multiples of 16). */
export function fluxSize(aspect: string): { width: number; height: number } {
  const [a, b] = aspect.split(':').map(Number) as [number, number];
  const w = Math.round(Math.sqrt((1024 * 1024 * a) / b) / 16) * 16;
  const h = Math.round(Math.sqrt((1024 * 1024 * b) / a) / 16) * 16;
  return { width: w, height: h };
}

export async function startFakeReplicate(apiKey = `r8_${randomBytes(16).toString('hex')}`): Promise<FakeReplicate> {
  const predictions = new Map<string, FakePrediction>();
  const creates: FakePrediction[] = [];
  const cancels: string[] = [];
  const requests: FakeReplicate['requests'] = [];
  const scripted: ScriptedAnswer[] = [];
  const files = new Map<string, { body: Buffer; type: string }>();
  let origin = '';
  const state = { preferWaits: 0, steps: 3, lostFiles: 0, tickMs: 20, closed: false };
  const webhooks = new ReplicateWebhooks();
  const clocks = new Set<NodeJS.Timeout>();

  const view = (p: FakePrediction): Record<string, unknown> => ({
    id: p.id,
    model: p.model,
    version: p.version,
    input: p.input,
    logs: p.logs,
    output: p.output,
    data_removed: false,
    error: p.error,
    status: p.status,
    created_at: new Date().toISOString(),
    source: 'api',
    ...(p.status === 'succeeded' && { metrics: { predict_time: 1.2 } }),
    urls: {
      get: `${origin}/v1/predictions/${p.id}`,
      cancel: `${origin}/v1/predictions/${p.id}/cancel`,
      stream: `https://stream.replicate.com/v1/files/${p.id}`,
      web: `https://replicate.com/p/${p.id}`,
    },
  });

  async function finish(p: FakePrediction, model: FakeModel): Promise<void> {
    const gone = state.lostFiles > 0;
    if (gone) state.lostFiles--;
    const prompt = String(p.input.prompt ?? '');
    if (prompt.includes('[nsfw]')) Object.assign(p, { status: 'failed', error: 'NSFW content detected. Try running it again, or try a different prompt.' });
    else if (prompt.includes('[crash]')) Object.assign(p, { status: 'failed', error: 'CUDA out of memory. Tried to allocate 2.00 GiB' });
    else if (model.kind === 'image') {
      const { width, height } = fluxSize(String(p.input.aspect_ratio ?? '1:1'));
      const format = String(p.input.output_format ?? 'webp');
      const n = Number(p.input.num_outputs ?? 1);
      const urls: string[] = [];
      for (let i = 0; i < n; i++) {
        const path = `/files/${p.id}/out-${i}.${format}`;
        if (!gone)
          files.set(path, {
            body: await image(width, height, format === 'jpg' ? 'jpeg' : (format as 'png' | 'webp')),
            type: format === 'jpg' ? 'image/jpeg' : `image/${format}`,
          });
        urls.push(`${origin}${path}`);
      }
      Object.assign(p, { status: 'succeeded', output: urls });
    } else {
      const path = `/files/${p.id}/output.mp4`;
      if (!gone) files.set(path, { body: await video(320, 240, 1), type: 'video/mp4' });
      Object.assign(p, { status: 'succeeded', output: `${origin}${path}` });
    }
  }

  /** One look: the prediction moves one step. */
  async function step(p: FakePrediction, model: FakeModel): Promise<void> {
    if (p.status === 'succeeded' || p.status === 'failed' || p.status === 'canceled') return;
    p.looks++;
    if (String(p.input.prompt ?? '').includes('[forever]')) {
      Object.assign(p, { status: 'processing', logs: `${p.logs}  1%|          | 1/100 [00:01<02:00,  1.00it/s]\n` });
      return;
    }
    if (p.looks >= state.steps) return finish(p, model);
    const total = 4;
    const done = Math.floor((p.looks / state.steps) * total);
    Object.assign(p, {
      status: 'processing',
      logs: `${p.logs}${String(Math.floor((100 * done) / total)).padStart(3)}%|${'█'.repeat(done)}${' '.repeat(total - done)}| ${done}/${total} [00:01<00:01,  2.00it/s]\n`,
    });
  }

  const modelOf = (p: FakePrediction): FakeModel => (p.model === FLUX_SCHNELL.name ? FLUX_SCHNELL : VIDEO_MODEL);
  const ended = (p: FakePrediction): boolean => ['succeeded', 'failed', 'canceled'].includes(p.status);

  /** Tells the prediction's webhook about `event`, if the create asked for it. */
  const tell = (p: FakePrediction, event: WebhookEvent): void => {
    if (p.webhook?.events.includes(event)) webhooks.deliver(p.webhook.url, p.id, event, JSON.stringify(view(p)));
  };

  /** A prediction with a webhook runs on its own clock (a step every tickMs); each event is told as it happens. */
  function runOnItsOwn(p: FakePrediction): void {
    tell(p, 'start');
    const tick = (): void => {
      if (state.closed) return;
      const clock = setTimeout(() => {
        clocks.delete(clock);
        if (ended(p)) return; // cancelled meanwhile
        void step(p, modelOf(p)).then(() => {
          if (!ended(p)) {
            tell(p, 'logs');
            return tick();
          }
          if (p.output !== null) tell(p, 'output');
          tell(p, 'completed');
        });
      }, state.tickMs);
      clocks.add(clock);
    };
    tick();
  }

  /** `webhook` and `webhook_events_filter` of a create, or the 422 fields that refuse them. */
  function webhookOf(body: Record<string, unknown>): FakePrediction['webhook'] | Array<{ type: string; field: string; description: string }> | undefined {
    if (body.webhook === undefined) return undefined;
    let url: URL | undefined;
    try {
      url = typeof body.webhook === 'string' ? new URL(body.webhook) : undefined;
    } catch {
      /* refused below */
    }
    if (!url || !/^https?:$/.test(url.protocol)) return [{ type: 'format', field: 'webhook', description: "Does not match format 'uri'" }];
    const filter = body.webhook_events_filter ?? [...WEBHOOK_EVENTS];
    if (!Array.isArray(filter) || filter.some((e) => !(WEBHOOK_EVENTS as readonly unknown[]).includes(e))) {
      return [{ type: 'enum', field: 'webhook_events_filter', description: `webhook_events_filter must be a list of: ${WEBHOOK_EVENTS.join(', ')}` }];
    }
    return { url: url.toString(), events: filter as WebhookEvent[] };
  }

  const server = http.createServer(async (req, res) => {
    const path = (req.url ?? '').split('?')[0]!;
    const method = req.method ?? 'GET';
    requests.push({ method, path, headers: req.headers });
    if (method === 'GET' && path.startsWith('/files/')) {
      const f = files.get(path);
      if (!f) return problem(res, 404, 'Not found', 'The requested resource could not be found.');
      res.writeHead(200, { 'content-type': f.type, 'content-length': String(f.body.length) });
      res.end(f.body);
      return;
    }
    if (req.headers.authorization !== `Bearer ${apiKey}`) return problem(res, 401, 'Unauthenticated', 'You did not pass a valid authentication token');
    const next = scripted.shift();
    // GET /v1/account: the account the token belongs to (a channel's probe, G323)
    if (next === undefined && method === 'GET' && path === '/v1/account') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ type: 'organization', username: 'mediagate-fake', name: 'mediagate fake', github_url: null }));
      return;
    }
    if (next === undefined && method === 'GET' && path === '/v1/webhooks/default/secret') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ key: webhooks.secret }));
      return;
    }
    if (next === 'reset') {
      req.socket.destroy();
      return;
    }
    if (next) return problem(res, next.status, next.title, next.detail, {}, next.headers);
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    let body: Record<string, unknown> = {};
    try {
      body = chunks.length ? (JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>) : {};
    } catch {
      return problem(res, 400, 'Bad request', 'The request body is not valid JSON.');
    }
    const official = /^\/v1\/models\/([^/]+\/[^/]+)\/predictions$/.exec(path);
    if (method === 'POST' && (official || path === '/v1/predictions')) {
      const version = typeof body.version === 'string' ? body.version.split(':').at(-1)! : undefined;
      const model = official ? (official[1] === FLUX_SCHNELL.name ? FLUX_SCHNELL : undefined) : version === VIDEO_VERSION ? VIDEO_MODEL : undefined;
      if (!model) {
        if (!official)
          return problem(
            res,
            422,
            'Invalid version or not permitted',
            "The specified version does not exist (or perhaps you don't have permission to use it?)",
          );
        return problem(res, 404, 'Not found', 'The requested resource could not be found.');
      }
      const input = (body.input ?? {}) as Record<string, unknown>;
      const invalid = invalidFields(model, input);
      if (invalid.length)
        return problem(res, 422, 'Input validation failed', invalid.map((f) => `- ${f.field}: ${f.description}`).join('\n'), { invalid_fields: invalid });
      const webhook = webhookOf(body);
      if (Array.isArray(webhook))
        return problem(res, 422, 'Input validation failed', webhook.map((f) => `- ${f.field}: ${f.description}`).join('\n'), { invalid_fields: webhook });
      if (String(input.prompt).includes('[hold]')) return; // never answered
      const p: FakePrediction = {
        id: randomBytes(13).toString('hex').slice(0, 26),
        model: model.name,
        version: version ?? `dp-${randomBytes(16).toString('hex')}`,
        input,
        status: 'starting',
        looks: 0,
        output: null,
        error: null,
        logs: '',
        ...(webhook && { webhook }),
      };
      predictions.set(p.id, p);
      creates.push(p);
      if (String(req.headers.prefer ?? '').startsWith('wait')) {
        state.preferWaits++;
        // blocks until the prediction ends (up to 60 s at the real API)
        while ((p.status as string) === 'starting' || (p.status as string) === 'processing') await step(p, model);
      }
      res.writeHead(201, { 'content-type': 'application/json', location: `${origin}/v1/predictions/${p.id}` });
      res.end(JSON.stringify(view(p)));
      if (p.webhook && !ended(p)) runOnItsOwn(p);
      return;
    }
    const one = /^\/v1\/predictions\/([^/]+)(\/cancel)?$/.exec(path);
    const p = one ? predictions.get(one[1]!) : undefined;
    if (one && !p) return problem(res, 404, 'Not found', 'The requested resource could not be found.');
    if (p && one![2] && method === 'POST') {
      cancels.push(p.id);
      if (p.status === 'starting' || p.status === 'processing') {
        p.status = 'canceled';
        tell(p, 'completed');
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(view(p)));
      return;
    }
    if (p && !one![2] && method === 'GET') {
      if (!p.webhook) await step(p, modelOf(p)); // one with a webhook runs on its own clock
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(view(p)));
      return;
    }
    problem(res, 404, 'Not found', 'The requested resource could not be found.');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  origin = `http://127.0.0.1:${port}`;
  return {
    baseUrl: `${origin}/v1`,
    apiKey,
    predictions,
    creates,
    cancels,
    requests,
    get preferWaits() {
      return state.preferWaits;
    },
    get steps() {
      return state.steps;
    },
    set steps(n: number) {
      state.steps = n;
    },
    webhooks,
    get tickMs() {
      return state.tickMs;
    },
    set tickMs(ms: number) {
      state.tickMs = ms;
    },
    script: (...answers) => {
      scripted.push(...answers);
    },
    expireFiles: () => files.clear(),
    loseFilesOfNext: (n) => {
      state.lostFiles = n;
    },
    close: async () => {
      state.closed = true;
      for (const clock of clocks) clearTimeout(clock);
      await webhooks.settled();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
