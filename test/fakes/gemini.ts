/**
 * A fake of the Gemini API (v1beta) on 127.0.0.1, port 0, speaking its protocol
 * (gemini-rules.ts): `POST /v1beta/models/{m}:generateContent` answering an image as an
 * `inlineData` part; `POST /v1beta/models/{m}:predictLongRunning` answering an operation `{name}`;
 * `GET /v1beta/{name}` done after `pollsToFinish` looks, with
 * `response.generateVideoResponse.generatedSamples[].video.uri` a file URI whose download needs
 * the key and redirects (302) to a signed storage URL that needs none, as the real one does; files
 * expire (`expire()`: 404 afterwards, as after the API's 2 days). Auth: `x-goog-api-key` (or
 * `?key=`); a wrong key is 400 INVALID_ARGUMENT `API_KEY_INVALID`, none is 403. No idempotency
 * key and no operation cancel exist. Prompt markers: `[blocked]` (promptFeedback.blockReason),
 * `[image-safety]` (finishReason IMAGE_SAFETY, no image), `[text-only]` (STOP with text only),
 * `[rai]` (done, no samples, raiMediaFilteredCount 1), `[op-error]` (operation error code 3),
 * `[hold]` (image: never answered; Veo: never done). `script()` makes the next POSTs faults.
 */
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import sharp from 'sharp';
import { video } from '../helpers/media-fixtures.js';
import { API_KEY_INVALID, checkImageCall, checkVideoCall, IMAGE_MODELS, notFound, rpcError, UNREGISTERED, VEO_MODELS, type RpcError } from './gemini-rules.js';

export interface RecordedGeminiCall {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body?: Record<string, any>;
}

export type ScriptedGeminiAnswer = RpcError | (RpcError & { headers: Record<string, string> }) | 'reset';

interface Operation {
  name: string;
  model: string;
  prompt: string;
  width: number;
  height: number;
  seconds: number;
  looks: number;
  fileId: string;
}

export interface FakeGemini {
  /** `http://127.0.0.1:<port>/v1beta` */
  baseUrl: string;
  apiKey: string;
  calls: RecordedGeminiCall[];
  /** predictLongRunning calls accepted (operations created). */
  creates(): number;
  /** Operation looks (`GET {name}`) before an operation is done (default 2). */
  pollsToFinish: number;
  script(...answers: ScriptedGeminiAnswer[]): void;
  /** Deletes every stored result file (their downloads answer 404 afterwards). */
  expire(): void;
  /** Requests of a result download (`:download`) and of its storage target, with their headers. */
  downloads: { path: string; headers: http.IncomingHttpHeaders }[];
  close(): Promise<void>;
}

async function readJson(req: http.IncomingMessage): Promise<Record<string, any> | undefined> {
  const parts: Buffer[] = [];
  for await (const c of req) parts.push(c as Buffer);
  const raw = Buffer.concat(parts).toString('utf8');
  if (raw === '') return {};
  try {
    return JSON.parse(raw) as Record<string, any>;
  } catch {
    return undefined;
  }
}

export async function startFakeGemini(apiKey = `AIza${randomBytes(16).toString('hex')}`): Promise<FakeGemini> {
  const calls: RecordedGeminiCall[] = [];
  const scripted: ScriptedGeminiAnswer[] = [];
  const operations = new Map<string, Operation>();
  const files = new Map<string, Operation>();
  const downloads: FakeGemini['downloads'] = [];
  let origin = '';
  const state = { pollsToFinish: 2 };

  const server = http.createServer(async (req, res) => {
    const send = (status: number, body: unknown, headers: Record<string, string> = {}): void => {
      res.writeHead(status, {
        'content-type': 'application/json; charset=UTF-8',
        vary: 'Origin, X-Origin, Referer',
        'server-timing': 'gfet4t7; dur=42',
        ...headers,
      });
      res.end(JSON.stringify(body));
    };
    const fail = (e: RpcError): void => send(e.status, e.body, 'headers' in e ? (e as { headers: Record<string, string> }).headers : {});
    const url = new URL(req.url ?? '/', 'http://fake');
    const path = url.pathname;

    const storage = /^\/storage\/([\w-]+)$/.exec(path);
    if (storage && req.method === 'GET') {
      downloads.push({ path, headers: req.headers });
      const op = files.get(storage[1]!);
      if (!op || url.searchParams.get('sig') !== 'ok') {
        res.writeHead(404).end();
        return;
      }
      const bytes = await video(op.width, op.height, op.seconds, 8);
      res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': String(bytes.length) }).end(bytes);
      return;
    }

    const key = req.headers['x-goog-api-key'] ?? url.searchParams.get('key') ?? undefined;
    if (key === undefined) {
      fail(UNREGISTERED);
      return;
    }
    if (key !== apiKey) {
      fail(API_KEY_INVALID);
      return;
    }

    const download = /^\/v1beta\/files\/([\w-]+):download$/.exec(path);
    if (download && req.method === 'GET') {
      downloads.push({ path, headers: req.headers });
      if (!files.has(download[1]!)) {
        fail(rpcError(404, 'NOT_FOUND', 'File not found.'));
        return;
      }
      res.writeHead(302, { location: `${origin}/storage/${download[1]}?sig=ok` }).end();
      return;
    }

    // GET /v1beta/models: the models the key may use, a page at a time (a channel's probe, G323)
    if (path === '/v1beta/models' && req.method === 'GET') {
      calls.push({ method: 'GET', path, headers: req.headers });
      send(200, {
        models: [{ name: 'models/veo-3.1-generate-preview', displayName: 'Veo 3.1', supportedGenerationMethods: ['predictLongRunning'] }],
        nextPageToken: 'page-2',
      });
      return;
    }

    const opMatch = /^\/v1beta\/(models\/[\w.-]+\/operations\/[\w-]+)$/.exec(path);
    if (opMatch && req.method === 'GET') {
      calls.push({ method: 'GET', path, headers: req.headers });
      const op = operations.get(opMatch[1]!);
      if (!op) {
        fail(rpcError(404, 'NOT_FOUND', `Operation ${opMatch[1]} not found.`));
        return;
      }
      op.looks++;
      if (op.prompt.includes('[hold]') || op.looks < state.pollsToFinish) {
        send(200, { name: op.name });
        return;
      }
      if (op.prompt.includes('[op-error]')) {
        send(200, { name: op.name, done: true, error: { code: 3, message: 'The input image could not be used: it contains a person who may be a minor.' } });
        return;
      }
      const response = { '@type': 'type.googleapis.com/google.ai.generativelanguage.v1beta.PredictLongRunningResponse' };
      if (op.prompt.includes('[rai]')) {
        send(200, {
          name: op.name,
          done: true,
          response: {
            ...response,
            generateVideoResponse: {
              raiMediaFilteredCount: 1,
              raiMediaFilteredReasons: ["We encountered an issue with the audio for your prompt. You weren't charged for this request."],
            },
          },
        });
        return;
      }
      files.set(op.fileId, op);
      send(200, {
        name: op.name,
        done: true,
        response: { ...response, generateVideoResponse: { generatedSamples: [{ video: { uri: `${origin}/v1beta/files/${op.fileId}:download?alt=media` } }] } },
      });
      return;
    }

    const call = /^\/v1beta\/models\/([\w.-]+):(generateContent|predictLongRunning)$/.exec(path);
    if (!call || req.method !== 'POST') {
      fail(rpcError(404, 'NOT_FOUND', `The requested URL ${path} was not found on this server.`));
      return;
    }
    const body = await readJson(req);
    calls.push({ method: 'POST', path, headers: req.headers, ...(body && { body }) });
    if (!body) {
      fail(rpcError(400, 'INVALID_ARGUMENT', 'Invalid JSON payload received.'));
      return;
    }
    const next = scripted.shift();
    if (next === 'reset') {
      req.socket.destroy();
      return;
    }
    if (next) {
      fail(next);
      return;
    }
    const [, model, method] = call as unknown as [string, string, string];

    if (method === 'generateContent') {
      if (!IMAGE_MODELS[model]) {
        fail(notFound(model, 'generateContent'));
        return;
      }
      const made = checkImageCall(model, body);
      if ('status' in made) {
        fail(made);
        return;
      }
      const meta = {
        usageMetadata: { promptTokenCount: 12, candidatesTokenCount: 1290, totalTokenCount: 1302 },
        modelVersion: model,
        responseId: randomBytes(12).toString('base64url'),
      };
      if (made.prompt.includes('[blocked]')) {
        send(200, { promptFeedback: { blockReason: 'PROHIBITED_CONTENT' }, ...meta });
        return;
      }
      if (made.prompt.includes('[image-safety]')) {
        send(200, { candidates: [{ content: { role: 'model' }, finishReason: 'IMAGE_SAFETY', index: 0 }], ...meta });
        return;
      }
      if (made.prompt.includes('[text-only]')) {
        send(200, {
          candidates: [{ content: { role: 'model', parts: [{ text: 'I can describe that scene instead.' }] }, finishReason: 'STOP', index: 0 }],
          ...meta,
        });
        return;
      }
      if (made.prompt.includes('[hold]')) return; // never answered
      const png = await sharp({ create: { width: made.width, height: made.height, channels: 3, background: { r: 20, g: 160, b: 90 } } })
        .png()
        .toBuffer();
      send(200, {
        candidates: [
          {
            content: { role: 'model', parts: [{ text: 'Here is your image.' }, { inlineData: { mimeType: 'image/png', data: png.toString('base64') } }] },
            finishReason: 'STOP',
            index: 0,
          },
        ],
        ...meta,
      });
      return;
    }
    if (!VEO_MODELS[model]) {
      fail(notFound(model, 'predictLongRunning'));
      return;
    }
    const made = checkVideoCall(model, body);
    if ('status' in made) {
      fail(made);
      return;
    }
    const name = `models/${model}/operations/${randomBytes(6).toString('hex')}`;
    operations.set(name, { name, model, ...made, looks: 0, fileId: randomBytes(6).toString('hex') });
    send(200, { name });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  origin = `http://127.0.0.1:${port}`;
  return {
    baseUrl: `${origin}/v1beta`,
    apiKey,
    calls,
    downloads,
    creates: () => operations.size,
    get pollsToFinish() {
      return state.pollsToFinish;
    },
    set pollsToFinish(n: number) {
      state.pollsToFinish = n;
    },
    script: (...answers) => {
      scripted.push(...answers);
    },
    expire: () => files.clear(),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
