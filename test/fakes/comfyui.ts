/**
 * A fake ComfyUI on 127.0.0.1 (port 0), from ComfyUI's server.py and execution.py:
 * - `POST /prompt` `{prompt, client_id?, prompt_id?, extra_data?, number?, front?}`: a body that is
 *   not JSON is aiohttp's 500; no `prompt` is 400 `no_prompt`; the workflow is validated
 *   (comfyui-nodes.ts) -> 400 `{error, node_errors}`, or queued as `[number, prompt_id, prompt,
 *   extra_data, outputs_to_execute]` (`client_id` and `create_time` put into `extra_data`) -> 200
 *   `{prompt_id, number, node_errors}`. The client's `prompt_id` is used as given (recent ComfyUI);
 *   `clientPromptIds: false` makes it choose its own (older ComfyUI), and ids are not deduplicated.
 * - `GET /queue` `{queue_running, queue_pending}` (pending in heap order, which is not run order:
 *   here the reverse of it), `GET /history/{id}` `{}` until the prompt ended, then its entry
 *   `{prompt, outputs, status: {status_str, completed, messages}, meta}`; `GET /history?max_items=`.
 * - `POST /queue` `{delete: [ids]}` / `{clear: true}` (200, even for an id it does not have);
 *   `POST /interrupt` `{prompt_id}` interrupts only that prompt when it runs (recent ComfyUI);
 *   without one, or with `targetedInterrupt: false` (older ComfyUI), whatever runs.
 * - `POST /upload/image` multipart (image, subfolder, type, overwrite): `{name, subfolder, type}`;
 *   an existing name without overwrite is renamed `name (1).ext`. `GET /view?filename=&subfolder=&type=`
 *   serves a file (400 for `..`, 404 unknown).
 * - One worker runs one prompt at a time; every `GET /queue` answers, then moves the worker one step
 *   (start the next prompt; finish the running one: comfyui-run.ts makes its files). A prompt whose
 *   sampler text has `[hold]` runs until released or interrupted. `restart()` forgets queue and
 *   history (in memory at ComfyUI), not files.
 */
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { nodeDefs, validatePrompt, type Installed } from './comfyui-nodes.js';
import { createExecutor, fileKey as key, NodeException, samplerText, type FakeFiles, type Prompt, type QueueItem } from './comfyui-run.js';
export type Scripted = { status: number; body: unknown } | 'reset';
export type CallKind = 'prompt' | 'queue' | 'history' | 'upload' | 'view' | 'interrupt' | 'delete';

export interface FakeComfyOptions {
  clientPromptIds?: boolean;
  targetedInterrupt?: boolean;
  installed?: Partial<Installed>;
  /** A bearer token every call must carry (a proxy in front of ComfyUI). */
  token?: string;
}

export interface FakeComfyUi {
  baseUrl: string;
  /** Bodies of the `POST /prompt` calls that queued a prompt, in order. */
  prompts: Array<{ body: Record<string, unknown>; promptId: string }>;
  /** Every call, in order (`GET /queue`, `POST /interrupt {"prompt_id":"x"}`, ...). */
  calls: string[];
  uploads: Array<{ name: string; subfolder: string; bytes: number }>;
  interrupts: Array<{ asked: string | undefined; interrupted: string | undefined }>;
  running(): string | undefined;
  pending(): string[];
  history(promptId: string): Record<string, unknown> | undefined;
  /** Queues a prompt of another client (an image workflow with `text`); its prompt id. */
  foreign(text: string): Promise<string>;
  /** Lets a `[hold]` prompt finish at the next step. */
  release(promptId: string): void;
  restart(): void;
  script(kind: CallKind, ...answers: Scripted[]): void;
  close(): Promise<void>;
}

const DEFAULT_INSTALLED: Installed = {
  checkpoints: ['sd_xl_base_1.0.safetensors', 'v1-5-pruned-emaonly-fp16.safetensors'],
  diffusionModels: ['wan2.2_ti2v_5B_fp16.safetensors'],
  textEncoders: ['umt5_xxl_fp8_e4m3fn_scaled.safetensors'],
  vaes: ['wan2.2_vae.safetensors'],
};

interface Running {
  item: QueueItem;
  hold: boolean;
  interrupted: boolean;
}

async function readBody(req: http.IncomingMessage): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of req) parts.push(c as Buffer);
  return Buffer.concat(parts);
}

export async function startFakeComfyUi(options: FakeComfyOptions = {}): Promise<FakeComfyUi> {
  const installed = { ...DEFAULT_INSTALLED, ...options.installed };
  const files: FakeFiles = new Map();
  const defs = nodeDefs(installed, (name) => files.has(key('input', '', name)));
  let pending: QueueItem[] = [];
  let running: Running | undefined;
  let history = new Map<string, Record<string, unknown>>();
  const released = new Set<string>();
  let number = 0;
  let steps: Promise<void> = Promise.resolve();
  const scripted: Record<CallKind, Scripted[]> = { prompt: [], queue: [], history: [], upload: [], view: [], interrupt: [], delete: [] };
  const fake = {
    prompts: [] as FakeComfyUi['prompts'],
    calls: [] as string[],
    uploads: [] as FakeComfyUi['uploads'],
    interrupts: [] as FakeComfyUi['interrupts'],
  };

  const now = (): number => Date.now();
  const executor = createExecutor(files);

  function finish(item: QueueItem, outputs: Record<string, unknown>, status: 'success' | 'error', messages: unknown[]): void {
    const [, promptId] = item;
    history.set(promptId, {
      prompt: item,
      outputs,
      status: {
        status_str: status,
        completed: status === 'success',
        messages: [
          ['execution_start', { prompt_id: promptId, timestamp: now() }],
          ['execution_cached', { nodes: [], prompt_id: promptId, timestamp: now() }],
          ...messages,
        ],
      },
      meta: Object.fromEntries(Object.keys(outputs).map((id) => [id, { node_id: id, display_node: id, parent_node: null, real_node_id: id }])),
    });
  }

  /** One step of the worker: the running prompt ends (unless held), or the next one starts. */
  async function step(): Promise<void> {
    if (running) {
      const r = running;
      if (r.hold && !r.interrupted && !released.has(r.item[1])) return;
      running = undefined;
      const [, promptId] = r.item;
      if (r.interrupted) {
        finish(r.item, {}, 'error', [['execution_interrupted', { prompt_id: promptId, node_id: '3', node_type: 'KSampler', executed: [], timestamp: now() }]]);
        return;
      }
      try {
        finish(r.item, await executor.execute(r.item), 'success', [['execution_success', { prompt_id: promptId, timestamp: now() }]]);
      } catch (err) {
        const e = err instanceof NodeException ? err : new NodeException('Exception', (err as Error).message, '?');
        finish(r.item, {}, 'error', [
          [
            'execution_error',
            {
              prompt_id: promptId,
              node_id: e.node,
              node_type: 'KSampler',
              executed: [],
              exception_message: e.message,
              exception_type: e.exceptionType,
              traceback: ['  File "execution.py", line 1, in execute\n'],
              current_inputs: {},
              current_outputs: {},
              timestamp: now(),
            },
          ],
        ]);
      }
      return;
    }
    if (pending.length === 0) return;
    pending.sort((a, b) => a[0] - b[0]);
    const item = pending.shift()!;
    running = { item, hold: samplerText(item[2]).includes('[hold]'), interrupted: false };
  }

  function queuePrompt(body: Record<string, unknown>): { status: number; json: unknown } {
    const n = typeof body.number === 'number' ? body.number : body.front ? -number : number;
    if (typeof body.number !== 'number') number++;
    if (!('prompt' in body))
      return {
        status: 400,
        json: { error: { type: 'no_prompt', message: 'No prompt provided', details: 'No prompt provided', extra_info: {} }, node_errors: {} },
      };
    const promptId = options.clientPromptIds !== false && body.prompt_id !== undefined ? String(body.prompt_id) : randomUUID();
    const v = validatePrompt(body.prompt, defs);
    if (!v.ok) return { status: 400, json: { error: v.error, node_errors: v.nodeErrors } };
    const extra = {
      ...(body.extra_data as Record<string, unknown> | undefined),
      ...(body.client_id !== undefined && { client_id: body.client_id }),
      create_time: now(),
    };
    pending.push([n, promptId, structuredClone(body.prompt as Prompt), extra, v.outputs]);
    fake.prompts.push({ body, promptId });
    return { status: 200, json: { prompt_id: promptId, number: n, node_errors: v.nodeErrors } };
  }

  async function upload(req: http.IncomingMessage, raw: Buffer): Promise<{ status: number; json?: unknown }> {
    const form = await new Response(raw, { headers: { 'content-type': req.headers['content-type'] ?? '' } }).formData().catch(() => undefined);
    const image = form?.get('image');
    if (!form || !image || typeof image === 'string' || !image.name) return { status: 400 };
    const type = String(form.get('type') ?? 'input');
    const subfolder = String(form.get('subfolder') ?? '');
    if (subfolder.split('/').includes('..') || image.name.includes('/')) return { status: 400 };
    const bytes = Buffer.from(await image.arrayBuffer());
    let name = image.name;
    const overwrite = ['true', '1'].includes(String(form.get('overwrite')));
    for (let i = 1; !overwrite && files.has(key(type, subfolder, name)) && !files.get(key(type, subfolder, name))!.bytes.equals(bytes); i++) {
      name = image.name.replace(/(\.[^.]*)?$/, (ext) => ` (${i})${ext}`);
    }
    files.set(key(type, subfolder, name), { bytes, contentType: image.type });
    fake.uploads.push({ name: subfolder ? `${subfolder}/${name}` : name, subfolder, bytes: bytes.length });
    return { status: 200, json: { name, subfolder, type } };
  }

  const server = http.createServer(async (req, res) => {
    const send = (status: number, json?: unknown): void => {
      if (json === undefined) {
        res.writeHead(status, { 'content-type': 'text/plain' });
        res.end(`${status}`);
        return;
      }
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(json));
    };
    const url = new URL(req.url ?? '/', 'http://fake');
    const path = url.pathname;
    const raw = await readBody(req);
    const route = `${req.method} ${path}`;
    fake.calls.push(req.method === 'POST' && path !== '/upload/image' ? `${route} ${raw.toString('utf8').slice(0, 200)}` : route);
    if (options.token && req.headers.authorization !== `Bearer ${options.token}`) {
      send(401, { error: 'unauthorized' });
      return;
    }
    const kind: CallKind | undefined =
      route === 'POST /prompt'
        ? 'prompt'
        : route === 'GET /queue'
          ? 'queue'
          : route.startsWith('GET /history')
            ? 'history'
            : route === 'POST /upload/image'
              ? 'upload'
              : route === 'GET /view'
                ? 'view'
                : route === 'POST /interrupt'
                  ? 'interrupt'
                  : route === 'POST /queue'
                    ? 'delete'
                    : undefined;
    if (!kind) {
      send(404);
      return;
    }
    const next = scripted[kind].shift();
    if (next === 'reset') {
      req.socket.destroy();
      return;
    }
    if (next) {
      send(next.status, next.body);
      return;
    }

    let body: Record<string, unknown> = {};
    if (req.method === 'POST' && kind !== 'upload') {
      try {
        body = raw.length > 0 ? (JSON.parse(raw.toString('utf8')) as Record<string, unknown>) : {};
      } catch {
        // aiohttp: request.json() raising is an unhandled error
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.end('500 Internal Server Error\n\nServer got itself in trouble');
        return;
      }
    }
    switch (kind) {
      case 'prompt': {
        const r = queuePrompt(body);
        send(r.status, r.json);
        return;
      }
      case 'queue': {
        const answer = { queue_running: running ? [running.item] : [], queue_pending: [...pending].sort((a, b) => b[0] - a[0]) };
        const text = JSON.stringify(answer);
        steps = steps.then(step);
        await steps;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(text);
        return;
      }
      case 'history': {
        const id = decodeURIComponent(path.slice('/history/'.length));
        if (path === '/history') {
          const max = Number(url.searchParams.get('max_items') ?? Number.POSITIVE_INFINITY);
          send(200, Object.fromEntries([...history].slice(-max)));
          return;
        }
        const h = history.get(id);
        send(200, h ? { [id]: h } : {});
        return;
      }
      case 'delete': {
        if (body.clear === true) pending = [];
        if (Array.isArray(body.delete)) pending = pending.filter((item) => !(body.delete as unknown[]).includes(item[1]));
        send(200);
        return;
      }
      case 'interrupt': {
        const asked = typeof body.prompt_id === 'string' ? body.prompt_id : undefined;
        const hit = running && (asked === undefined || options.targetedInterrupt === false || running.item[1] === asked) ? running : undefined;
        if (hit) hit.interrupted = true;
        fake.interrupts.push({ asked, interrupted: hit?.item[1] });
        send(200);
        return;
      }
      case 'upload': {
        const r = await upload(req, raw);
        send(r.status, r.json);
        return;
      }
      case 'view': {
        const filename = url.searchParams.get('filename');
        if (!filename) {
          send(404);
          return;
        }
        if (filename.startsWith('/') || filename.includes('..')) {
          send(400);
          return;
        }
        const subfolder = url.searchParams.get('subfolder') ?? '';
        if (subfolder.split('/').includes('..')) {
          send(403);
          return;
        }
        const f = files.get(key(url.searchParams.get('type') ?? 'output', subfolder, filename));
        if (!f) {
          send(404);
          return;
        }
        res.writeHead(200, { 'content-type': f.contentType, 'content-length': String(f.bytes.length), 'content-disposition': `filename="${filename}"` });
        res.end(f.bytes);
      }
    }
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    baseUrl,
    ...fake,
    running: () => running?.item[1],
    pending: () => pending.map((p) => p[1]),
    history: (id) => history.get(id),
    foreign: async (text) => {
      const r = queuePrompt({
        client_id: 'someone-else',
        prompt: {
          4: { class_type: 'CheckpointLoaderSimple', inputs: { ckpt_name: installed.checkpoints[0] } },
          5: { class_type: 'EmptyLatentImage', inputs: { width: 512, height: 512, batch_size: 1 } },
          6: { class_type: 'CLIPTextEncode', inputs: { text, clip: ['4', 1] } },
          7: { class_type: 'CLIPTextEncode', inputs: { text: '', clip: ['4', 1] } },
          3: {
            class_type: 'KSampler',
            inputs: {
              seed: 1,
              steps: 20,
              cfg: 7,
              sampler_name: 'euler',
              scheduler: 'normal',
              denoise: 1,
              model: ['4', 0],
              positive: ['6', 0],
              negative: ['7', 0],
              latent_image: ['5', 0],
            },
          },
          8: { class_type: 'VAEDecode', inputs: { samples: ['3', 0], vae: ['4', 2] } },
          9: { class_type: 'SaveImage', inputs: { images: ['8', 0], filename_prefix: 'someone/else' } },
        },
      });
      return (r.json as { prompt_id: string }).prompt_id;
    },
    release: (id) => {
      released.add(id);
    },
    restart: () => {
      pending = [];
      running = undefined;
      history = new Map();
    },
    script: (kind, ...answers) => {
      scripted[kind].push(...answers);
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
