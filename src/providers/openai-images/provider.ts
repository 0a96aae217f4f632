/**
 * The `openai-images` provider (G130-G132): `pic` and Model Center image models made
 * by the OpenAI Images API. Synchronous: a start is one `POST /images/generations` (JSON) or, with
 * reference images, one `POST /images/edits` (multipart, `image[]`), answered with the image as
 * base64, which `start` returns as the task's result (`done`). GPT image models always answer
 * base64 and refuse `response_format`, so it is sent to dall-e models only. Each answer's
 * `x-request-id` is logged with the task id.
 */
import { PROBE_TIMEOUT_MS, probeResult } from '../probe.js';
import type { Dispatcher, FormData } from 'undici';
import { undici } from '../../http/undici.js';
import type { OutputSpec } from '../../contract/output.js';
import { idempotencyKeyOf } from '../toolkit/idempotency-key.js';
import { scrubberFor } from '../toolkit/errors.js';
import type { MediaProvider, ProviderContext, ProviderJob, Refusal, RequestedJob, StartResult } from '../types.js';
import { UnrecoverableError } from '../types.js';
import { imagesFailure, whoOf } from './errors.js';
import { ImagesHttp, type ImagesAnswer } from './http.js';
import { imagesCallOf, type ImagesCall } from './mapping.js';
import { estimateProgress } from '../toolkit/progress.js';
import { imageOfAnswer } from './reply.js';
import { tuningOf } from '../provider-tuning.js';
import { OPENAI_IMAGES_DEFAULTS } from './defaults.js';

export interface OpenAiImagesOptions {
  id: string;
  /** Up to the API version (default https://api.openai.com/v1). */
  baseUrl?: string | undefined;
  /** Sent as `Authorization: Bearer <apiKey>`; never logged nor put in a message. */
  apiKey?: string | undefined;
  concurrency?: number | undefined;
  /** Bound on one generation call, ms (default 300 000: large images take minutes). */
  timeoutMs?: number | undefined;
  /** TCP (+TLS) connect, ms (default 10 000). */
  connectTimeoutMs?: number | undefined;
  dispatcher?: Dispatcher | undefined;
}

/** What a generation typically takes, for the progress estimate (ms). */
const TYPICAL_MS = 30_000;

/** Largest reference image sent: 50 MB for GPT image models, 4 MB for dall-e-2 (the API's limits). */
const maxImageBytes = (call: ImagesCall): number => (call.rules.kind === 'dall-e-2' ? 4 : 50) * 1024 * 1024;

function jsonBody(call: ImagesCall, output: Extract<OutputSpec, { kind: 'image' }>): Record<string, unknown> {
  return {
    model: call.model,
    prompt: call.prompt,
    n: 1,
    size: `${call.size.width}x${call.size.height}`,
    ...(call.quality !== undefined && { quality: call.quality }),
    ...(call.rules.gptImage ? { output_format: output.format } : { response_format: 'b64_json' }),
  };
}

async function formBody(call: ImagesCall, output: Extract<OutputSpec, { kind: 'image' }>, ctx: ProviderContext): Promise<FormData> {
  const form = new (undici().FormData)();
  for (const [k, v] of Object.entries(jsonBody(call, output))) form.append(k, String(v));
  const field = call.rules.kind === 'dall-e-2' ? 'image' : 'image[]';
  for (const [i, ref] of call.images.entries()) {
    const bytes = await ctx.readMedia(ref, maxImageBytes(call));
    const format = ref.facts?.format ?? 'png';
    const type = format === 'jpeg' || format === 'jpg' ? 'image/jpeg' : format === 'webp' ? 'image/webp' : 'image/png';
    form.append(field, new Blob([bytes], { type }), `image-${i}.${type.slice(6)}`);
  }
  return form;
}

export function createOpenAiImagesProvider(options: OpenAiImagesOptions): MediaProvider {
  const { id, apiKey } = options;
  const base = new URL(options.baseUrl ?? OPENAI_IMAGES_DEFAULTS.baseUrl);
  const timeoutMs = options.timeoutMs ?? OPENAI_IMAGES_DEFAULTS.timeoutMs;
  const who = whoOf(id);
  const http = new ImagesHttp({
    id,
    who,
    baseUrl: base,
    apiKey,
    connectTimeoutMs: options.connectTimeoutMs ?? OPENAI_IMAGES_DEFAULTS.connectTimeoutMs,
    dispatcher: options.dispatcher,
  });
  const scrub = scrubberFor(apiKey, [base]);

  function refuse(job: RequestedJob): Refusal | undefined {
    const call = imagesCallOf(job);
    return 'field' in call ? call : undefined;
  }

  async function start(job: ProviderJob, ctx: ProviderContext): Promise<StartResult> {
    ctx.signal.throwIfAborted();
    const call = imagesCallOf(job);
    if ('field' in call) throw new UnrecoverableError(`${call.field}: ${call.message}`, { param: call.field });
    const output = job.output as Extract<OutputSpec, { kind: 'image' }>;
    const edits = call.images.length > 0;
    const body = edits ? await formBody(call, output, ctx) : jsonBody(call, output);
    const stop = estimateProgress((p) => ctx.reportProgress(p), TYPICAL_MS);
    let answer: ImagesAnswer;
    try {
      answer = await http.post(edits ? '/images/edits' : '/images/generations', body, { 'idempotency-key': idempotencyKeyOf(job) }, ctx.signal, timeoutMs);
    } finally {
      stop();
    }
    const requestId = answer.headers['x-request-id'];
    ctx.log.info(
      { taskId: job.taskId, provider: id, upstreamRequestId: requestId, status: answer.status, upstreamModel: call.model },
      'openai-images answered',
    );
    if (answer.status < 200 || answer.status >= 300) throw imagesFailure(id, answer.status, answer.headers, answer.text, scrub, call.images, call.model);
    const file = imageOfAnswer(id, who, answer.text, output);
    return { state: 'done', output: { files: [file] } };
  }

  return {
    id,
    // the models the key may use: a list call of the OpenAI API
    probe: async (signal) =>
      probeResult('GET /models', await http.probeGet('/models', apiKey ? { authorization: `Bearer ${apiKey}` } : {}, signal, PROBE_TIMEOUT_MS)),
    capabilities: { families: ['pic', 'model-center'] },
    ...tuningOf(options),
    refuse,
    start,
    close: () => http.close(),
  };
}
