/**
 * The `gemini` provider (G145-G149): `pic` and Model Center image models made by
 * Gemini image models (`POST models/{m}:generateContent`, synchronous: `start` answers `done` with
 * the image), and `clip` and Model Center video models made by Veo (`POST
 * models/{m}:predictLongRunning` -> an operation `{name}` that `start` returns as the reference;
 * each `check` is one `GET {name}`). The key travels in `x-goog-api-key`. The Gemini API has no
 * idempotency key and no cancel for Veo operations (no `cancel` method): see G149.
 * Each call is logged with the task id and the upstream's id (operation name, responseId).
 */
import { PROBE_TIMEOUT_MS, probeResult } from '../probe.js';
import type { Dispatcher } from 'undici';
import type { MediaRef } from '../../contract/media-refs.js';
import { scrubberFor } from '../toolkit/errors.js';
import { estimateProgress } from '../toolkit/progress.js';
import type { CheckResult, MediaProvider, PollSeconds, CallContext, ProviderContext, ProviderJob, Refusal, RequestedJob, StartResult } from '../types.js';
import type { UpstreamRef } from '../../contract/task-request.js';
import { UnrecoverableError } from '../types.js';
import { callFailure, operationQueryFailure, whoOf, type FieldNames } from './errors.js';
import { GeminiHttp } from './http.js';
import { imageCallOf, type ImageCall } from './image-mapping.js';
import { imageOfAnswer } from './image-reply.js';
import { isVeo } from './models.js';
import { checkResultOf, operationNameOf, type OperationReading } from './operation.js';
import { videoCallOf, type VideoCall } from './video-mapping.js';
import { tuningOf } from '../provider-tuning.js';
import { GEMINI_DEFAULTS } from './defaults.js';

export interface GeminiOptions {
  id: string;
  /** Up to the API version (default https://generativelanguage.googleapis.com/v1beta). */
  baseUrl?: string | undefined;
  /** Sent as `x-goog-api-key`; never logged nor put in a message. */
  apiKey?: string | undefined;
  concurrency?: number | undefined;
  /** Bound on one call, ms (default 300 000: a 4K image takes minutes inside one generateContent). */
  timeoutMs?: number | undefined;
  connectTimeoutMs?: number | undefined;
  /** Seconds between checks of a Veo operation, or per family (Veo takes 1-6 minutes; default 10). */
  pollSeconds?: PollSeconds | undefined;
  dispatcher?: Dispatcher | undefined;
}

/** What an image generation typically takes, for the progress estimate (ms). */
const TYPICAL_IMAGE_MS = 20_000;
/** Largest caller image sent inline (the API's whole request is bounded at 20 MB). */
const MAX_INLINE_BYTES = 14 * 1024 * 1024;
/** One check is one quick GET: its own bound. */
const CHECK_TIMEOUT_MS = 60_000;

const OPERATION_NAME = /^models\/[\w.-]+\/operations\/[\w.-]+$/;

function mimeOf(ref: MediaRef): string {
  const f = ref.facts?.format;
  return f === 'jpeg' || f === 'jpg' ? 'image/jpeg' : f === 'webp' ? 'image/webp' : 'image/png';
}

async function inline(ctx: ProviderContext, ref: MediaRef): Promise<{ mimeType: string; data: string }> {
  return { mimeType: mimeOf(ref), data: (await ctx.readMedia(ref, MAX_INLINE_BYTES)).toString('base64') };
}

async function imageBody(call: ImageCall, ctx: ProviderContext): Promise<Record<string, unknown>> {
  const refs: Array<{ inlineData: { mimeType: string; data: string } }> = [];
  for (const ref of call.images) refs.push({ inlineData: await inline(ctx, ref) });
  return {
    contents: [{ role: 'user', parts: [{ text: call.prompt }, ...refs] }],
    generationConfig: {
      responseModalities: ['TEXT', 'IMAGE'],
      imageConfig: { aspectRatio: call.aspectRatio, ...(call.imageSize !== undefined && { imageSize: call.imageSize }) },
    },
  };
}

async function videoBody(call: VideoCall, ctx: ProviderContext): Promise<Record<string, unknown>> {
  const asImage = async (ref: MediaRef) => {
    const { mimeType, data } = await inline(ctx, ref);
    return { bytesBase64Encoded: data, mimeType };
  };
  const references: Array<{ image: { bytesBase64Encoded: string; mimeType: string }; referenceType: string }> = [];
  for (const ref of call.references) references.push({ image: await asImage(ref), referenceType: 'asset' });
  const instance = {
    prompt: call.prompt,
    ...(call.firstFrame && { image: await asImage(call.firstFrame) }),
    ...(call.lastFrame && { lastFrame: await asImage(call.lastFrame) }),
    ...(references.length > 0 && { referenceImages: references }),
  };
  return { instances: [instance], parameters: call.parameters };
}

export function createGeminiProvider(options: GeminiOptions): MediaProvider {
  const { id, apiKey } = options;
  const base = new URL(options.baseUrl ?? GEMINI_DEFAULTS.baseUrl);
  const timeoutMs = options.timeoutMs ?? GEMINI_DEFAULTS.timeoutMs;
  const who = whoOf(id);
  const http = new GeminiHttp({
    id,
    who,
    baseUrl: base,
    apiKey,
    connectTimeoutMs: options.connectTimeoutMs ?? GEMINI_DEFAULTS.connectTimeoutMs,
    dispatcher: options.dispatcher,
  });
  const scrub = scrubberFor(apiKey, [base]);
  const reading: OperationReading = { id, who, scrub, base, keyHeaders: http.keyHeaders };

  function callOf(job: RequestedJob): { image: ImageCall } | { video: VideoCall } | Refusal {
    const video = job.output.kind === 'video';
    if (video !== isVeo(job.upstreamModel)) {
      return {
        field: 'model',
        message: `model ${job.model} makes ${video ? 'videos' : 'images'}; the route sends it to ${job.upstreamModel}, which makes ${video ? 'images' : 'videos'}`,
      };
    }
    const call = video ? videoCallOf(job) : imageCallOf(job);
    if ('field' in call) return call;
    return video ? { video: call as VideoCall } : { image: call as ImageCall };
  }

  function refuse(job: RequestedJob): Refusal | undefined {
    const call = callOf(job);
    return 'field' in call ? call : undefined;
  }

  async function post(job: ProviderJob, ctx: ProviderContext, verb: string, body: Record<string, unknown>, names: FieldNames) {
    const answer = await http.call('POST', `/models/${encodeURIComponent(job.upstreamModel)}:${verb}`, body, ctx.signal, timeoutMs);
    if (answer.status < 200 || answer.status >= 300) {
      ctx.log.info({ taskId: job.taskId, provider: id, status: answer.status, upstreamModel: job.upstreamModel }, `gemini ${verb} refused`);
      throw callFailure(id, answer.status, answer.headers, answer.text, scrub, job.upstreamModel, names);
    }
    return answer;
  }

  async function start(job: ProviderJob, ctx: ProviderContext): Promise<StartResult> {
    ctx.signal.throwIfAborted();
    const call = callOf(job);
    if ('field' in call) throw new UnrecoverableError(`${call.field}: ${call.message}`, { param: call.field });
    if ('image' in call) {
      const c = call.image;
      const body = await imageBody(c, ctx);
      const names = { aspect: c.aspectField, image: c.images[0]?.field };
      const stop = estimateProgress((p) => ctx.reportProgress(p), TYPICAL_IMAGE_MS);
      let text: string;
      try {
        text = (await post(job, ctx, 'generateContent', body, names)).text;
      } finally {
        stop();
      }
      const responseId = /"responseId"\s*:\s*"([\w-]{1,100})"/.exec(text.slice(-4096))?.[1];
      ctx.log.info({ taskId: job.taskId, provider: id, upstreamResponseId: responseId, upstreamModel: c.model }, 'gemini generateContent answered');
      return { state: 'done', output: { files: [imageOfAnswer(id, who, text, scrub)] } };
    }
    const c = call.video;
    const body = await videoBody(c, ctx);
    const names = { aspect: 'aspect_ratio', image: c.firstFrame?.field, lastFrame: c.lastFrame?.field, references: c.references[0]?.field };
    const answer = await post(job, ctx, 'predictLongRunning', body, names);
    const name = operationNameOf(reading, answer.text);
    ctx.log.info({ taskId: job.taskId, provider: id, upstreamOperation: name, upstreamModel: c.model }, 'gemini Veo generation started');
    return { state: 'started', ref: { id: name } };
  }

  async function check(ref: UpstreamRef, job: ProviderJob, ctx: CallContext): Promise<CheckResult> {
    if (!OPERATION_NAME.test(ref.id)) return { state: 'failed', error: new Error(`${who}: the saved reference is not an operation name`) };
    const answer = await http.call('GET', `/${ref.id}`, undefined, ctx.signal, Math.min(timeoutMs, CHECK_TIMEOUT_MS));
    if (answer.status < 200 || answer.status >= 300) {
      const failure = operationQueryFailure(id, answer.status, answer.headers, answer.text, scrub);
      if ('gone' in failure) return { state: 'failed', error: failure.gone };
      throw failure;
    }
    const result = checkResultOf(reading, answer.text);
    if (result.state !== 'pending') {
      ctx.log.info({ taskId: job.taskId, provider: id, upstreamOperation: ref.id, state: result.state }, 'gemini Veo generation ended');
    }
    return result;
  }

  return {
    id,
    // the models the key may use: a list call of the Gemini API
    probe: async (signal) => probeResult('GET /models', await http.call('GET', '/models?pageSize=1', undefined, signal, PROBE_TIMEOUT_MS)),
    capabilities: { families: ['pic', 'clip', 'model-center'] },
    pollSeconds: options.pollSeconds ?? GEMINI_DEFAULTS.pollSeconds,
    ...tuningOf(options),
    refuse,
    start,
    check,
    close: () => http.close(),
  };
}
