/**
 * A fake of the OpenAI Images API (`POST /v1/images/generations` JSON, `POST /v1/images/edits`
 * multipart with `image[]`) on 127.0.0.1, port 0, speaking the real protocol: bearer auth (401
 * `invalid_api_key`), the API's validation (openai-images-rules.ts), error bodies
 * `{error: {message, type, param, code}}`, `x-request-id` and `x-ratelimit-*` headers on every
 * answer, base64 images of the size asked (`data[0].b64_json`; dall-e without `response_format`
 * answers a URL). A prompt containing `[unsafe]` is refused by its "safety system" (gpt models:
 * 400 `moderation_blocked`, dall-e: 400 `content_policy_violation`); `[hold]` is never answered.
 * `fake.script(...)` makes the next answers faults: any status and error (429
 * `insufficient_quota`, 429 with `retry-after`, 500), or a reset connection.
 */
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import sharp from 'sharp';
import { madeSize, validate, type ApiError, type ImagesRequest } from './openai-images-rules.js';

export interface RecordedImagesRequest extends ImagesRequest {
  path: string;
  headers: http.IncomingHttpHeaders;
  requestId: string;
}

export type ScriptedAnswer = { status: number; error: ApiError['error']; headers?: Record<string, string> } | 'reset';

export interface FakeOpenAiImages {
  /** `http://127.0.0.1:<port>/v1` */
  baseUrl: string;
  apiKey: string;
  requests: RecordedImagesRequest[];
  /** The next answers, in order, instead of generating. */
  script(...answers: ScriptedAnswer[]): void;
  /** Held requests whose client went away. */
  dropped: number;
  close(): Promise<void>;
}

export const QUOTA_ERROR: ScriptedAnswer = {
  status: 429,
  error: {
    message: 'You exceeded your current quota, please check your plan and billing details.',
    type: 'insufficient_quota',
    param: null,
    code: 'insufficient_quota',
  },
};
export const rateLimited = (retryAfter: string): ScriptedAnswer => ({
  status: 429,
  headers: { 'retry-after': retryAfter },
  error: { message: 'Rate limit reached for images per minute. Please try again later.', type: 'requests', param: null, code: 'rate_limit_exceeded' },
});
export const SERVER_ERROR: ScriptedAnswer = {
  status: 500,
  error: { message: 'The server had an error while processing your request. Sorry about that!', type: 'server_error', param: null, code: null },
};

async function readBody(req: http.IncomingMessage): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of req) parts.push(c as Buffer);
  return Buffer.concat(parts);
}

async function parseRequest(req: http.IncomingMessage, edits: boolean): Promise<ImagesRequest> {
  const raw = await readBody(req);
  const type = req.headers['content-type'] ?? '';
  if (type.startsWith('multipart/form-data')) {
    const form = await new Request('http://fake/', { method: 'POST', headers: { 'content-type': type }, body: raw }).formData();
    const fields: Record<string, string> = {};
    const images: ImagesRequest['images'] = [];
    for (const [k, v] of form.entries()) {
      if (typeof v === 'string') fields[k] = v;
      else if (k === 'image[]' || k === 'image') images.push({ field: k, type: v.type, bytes: v.size });
    }
    return { edits, fields, images };
  }
  const json = JSON.parse(raw.toString('utf8') || '{}') as Record<string, unknown>;
  const fields = Object.fromEntries(
    Object.entries(json)
      .filter(([, v]) => v !== null && v !== undefined)
      .map(([k, v]) => [k, String(v)]),
  );
  return { edits, fields, images: [] };
}

export async function startFakeOpenAiImages(apiKey = `sk-fake-${randomBytes(8).toString('hex')}`): Promise<FakeOpenAiImages> {
  const requests: RecordedImagesRequest[] = [];
  const scripted: ScriptedAnswer[] = [];
  let dropped = 0;
  let remaining = 5000;

  const server = http.createServer(async (req, res) => {
    const requestId = `req_${randomBytes(16).toString('hex')}`;
    const send = (status: number, body: unknown, extra: Record<string, string> = {}): void => {
      res.writeHead(status, {
        'content-type': 'application/json',
        'x-request-id': requestId,
        'openai-version': '2020-10-01',
        'openai-processing-ms': '12',
        'x-ratelimit-limit-requests': '5000',
        'x-ratelimit-remaining-requests': String(Math.max(0, --remaining)),
        'x-ratelimit-reset-requests': '12ms',
        ...extra,
      });
      res.end(JSON.stringify(body));
    };
    const path = (req.url ?? '').split('?')[0]!;
    // GET /v1/models: the list of models the key may use (a channel's probe, G323); bearer auth as every call
    if (req.method === 'GET' && path === '/v1/models') {
      if (req.headers.authorization !== `Bearer ${apiKey}`)
        send(401, { error: { message: 'Incorrect API key provided: sk-***.', type: 'invalid_request_error', param: null, code: 'invalid_api_key' } });
      else
        send(200, {
          object: 'list',
          data: ['gpt-image-1', 'dall-e-3', 'dall-e-2'].map((id) => ({ id, object: 'model', created: 1698785189, owned_by: 'system' })),
        });
      return;
    }
    const edits = path === '/v1/images/edits';
    if (req.method !== 'POST' || (!edits && path !== '/v1/images/generations')) {
      send(404, { error: { message: `Invalid URL (${req.method} ${path})`, type: 'invalid_request_error', param: null, code: null } });
      return;
    }
    if (req.headers.authorization !== `Bearer ${apiKey}`) {
      send(401, {
        error: {
          message: 'Incorrect API key provided: sk-***. You can find your API key at https://platform.openai.com/account/api-keys.',
          type: 'invalid_request_error',
          param: null,
          code: 'invalid_api_key',
        },
      });
      return;
    }
    let parsed: ImagesRequest;
    try {
      parsed = await parseRequest(req, edits);
    } catch {
      send(400, { error: { message: 'We could not parse the JSON body of your request.', type: 'invalid_request_error', param: null, code: null } });
      return;
    }
    requests.push({ ...parsed, path, headers: req.headers, requestId });
    const next = scripted.shift();
    if (next === 'reset') {
      req.socket.destroy();
      return;
    }
    if (next) {
      send(next.status, { error: next.error }, next.headers);
      return;
    }
    const refused = validate(parsed);
    if (refused) {
      send(refused.status, { error: refused.error });
      return;
    }
    const f = parsed.fields;
    const model = f.model ?? (edits ? 'gpt-image-1.5' : 'dall-e-2');
    const gpt = model.startsWith('gpt-image') || model.startsWith('chatgpt-image');
    if (f.prompt!.includes('[unsafe]')) {
      send(400, {
        error: gpt
          ? {
              message:
                'Your request was rejected by the safety system. If you believe this is an error, contact us at help.openai.com and include the request ID.',
              type: 'image_generation_user_error',
              param: null,
              code: 'moderation_blocked',
            }
          : {
              message: 'Your request was rejected as a result of our safety system. Your prompt may contain text that is not allowed by our safety system.',
              type: 'invalid_request_error',
              param: null,
              code: 'content_policy_violation',
            },
      });
      return;
    }
    if (f.prompt!.includes('[hold]')) {
      res.on('close', () => {
        dropped++;
      });
      return; // never answered
    }
    const { width, height } = madeSize(f);
    const format = gpt ? ((f.output_format ?? 'png') as 'png' | 'jpeg' | 'webp') : 'png';
    const bytes = await sharp({ create: { width, height, channels: 3, background: { r: 30, g: 120, b: 200 } } })
      .toFormat(format)
      .toBuffer();
    const item =
      gpt || f.response_format === 'b64_json'
        ? { b64_json: bytes.toString('base64'), ...(model === 'dall-e-3' && { revised_prompt: f.prompt }) }
        : { url: `https://oaidalleapiprodscus.blob.core.windows.net/private/img-${requestId}.png?se=2099-01-01&sig=fake` };
    send(200, {
      created: Math.floor(Date.now() / 1000),
      data: [item],
      ...(gpt && {
        background: 'opaque',
        output_format: format,
        quality: f.quality ?? 'medium',
        size: `${width}x${height}`,
        usage: { input_tokens: 50, input_tokens_details: { image_tokens: 0, text_tokens: 50 }, output_tokens: 1056, total_tokens: 1106 },
      }),
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    apiKey,
    requests,
    script: (...answers) => {
      scripted.push(...answers);
    },
    get dropped() {
      return dropped;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
