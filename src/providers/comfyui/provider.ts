/**
 * The `comfyui` provider (G150-G156): any family, made by a self-hosted ComfyUI from a
 * workflow template (templates.ts) whose slots the request fills (mapping.ts). A start looks for a
 * prompt of this task's generation already at ComfyUI (a create repeated after a crash), uploads
 * the caller's images (`POST /upload/image`), then queues the filled workflow (`POST /prompt` with
 * this generation's prompt id, `client_id` and `extra_data.mediagate`); the prompt id is the saved
 * reference. A check is one `GET /queue` while the prompt waits or runs, and one `GET
 * /history/{id}` once it left the queue: its output files are RemoteFiles at ComfyUI's `/view`,
 * which the engine re-hosts at once. Cancel deletes a waiting prompt from the queue, or interrupts
 * a running one by its id (never an interrupt without one: that would stop whatever runs). No
 * websocket is held: progress is the queue position, then the engine's time estimate.
 */
import { PROBE_TIMEOUT_MS, probeResult } from '../probe.js';
import { loadSharp } from '../../media/sharp.js';
import type { Dispatcher } from 'undici';
import { MEDIA_FORMATS } from '../../media/formats.js';
import { isImageBytes } from '../../media/sniff.js';
import { queueProgress } from '../queue-progress.js';
import { malformedReply, scrubberFor } from '../toolkit/errors.js';
import type {
  CheckResult,
  MediaProvider,
  PollSeconds,
  CallContext,
  ProviderContext,
  ProviderJob,
  Refusal,
  RemoteFile,
  RequestedJob,
  StartResult,
} from '../types.js';
import type { UpstreamRef } from '../../contract/task-request.js';
import { UnrecoverableError } from '../types.js';
import { builtInTemplates, DEFAULT_TEMPLATE } from './builtin-templates.js';
import { callFailure, executionFailure, lostPrompt, promptFailure, whoOf } from './errors.js';
import { ComfyHttp, type ComfyAnswer } from './http.js';
import { bindingOf, workflowOf, type ComfyBinding } from './mapping.js';
import { promptIdOf, seedOf } from './prompt-identity.js';
import { historyEntryOf, outputFiles, parseJson, queuePlace, type PromptMark } from './reply.js';
import type { ComfyTemplate } from './templates.js';
import { tuningOf } from '../provider-tuning.js';
import { FAMILIES } from '../../contract/families.js';
import { COMFYUI_DEFAULTS } from './defaults.js';

export interface ComfyUiOptions {
  id: string;
  /** ComfyUI's address (default http://127.0.0.1:8188). */
  baseUrl?: string | undefined;
  /** Sent as `Authorization: Bearer` (for a proxy in front of ComfyUI); never logged nor put in a message. */
  apiKey?: string | undefined;
  /** Templates from providers.json `models`, read and checked: they add to the built-in ones, replacing one of the same name. */
  templates?: Record<string, ComfyTemplate> | undefined;
  concurrency?: number | undefined;
  /** Bound on one call (look, upload, queue, cancel), ms (default 60 000). */
  timeoutMs?: number | undefined;
  /** TCP connect, ms (default 10 000). */
  connectTimeoutMs?: number | undefined;
  pollSeconds?: PollSeconds | undefined;
  dispatcher?: Dispatcher | undefined;
}

/** Largest caller image uploaded (ComfyUI's own default upload limit is 100 MB). */
const MAX_UPLOAD_BYTES = 100 * 1024 * 1024;
/** ComfyUI input subfolder the caller images go to. */
const UPLOAD_SUBFOLDER = 'mediagate';

/** What a started prompt keeps: what its files are, and which nodes make them. */
interface ComfyRefData {
  kind: RemoteFile['kind'];
  outputs?: string[];
  template: string;
}

const ok = (a: ComfyAnswer): boolean => a.status >= 200 && a.status < 300;

export function createComfyUiProvider(options: ComfyUiOptions): MediaProvider {
  const { id, apiKey } = options;
  const base = new URL(options.baseUrl ?? COMFYUI_DEFAULTS.baseUrl);
  const timeoutMs = options.timeoutMs ?? COMFYUI_DEFAULTS.timeoutMs;
  const who = whoOf(id);
  const http = new ComfyHttp({
    id,
    who,
    baseUrl: base,
    apiKey,
    connectTimeoutMs: options.connectTimeoutMs ?? COMFYUI_DEFAULTS.connectTimeoutMs,
    dispatcher: options.dispatcher,
  });
  const scrub = scrubberFor(apiKey, [base]);
  const templates = { ...builtInTemplates(), ...options.templates };
  const clientId = `mediagate:${id}`;

  /** The route's template, else the default one for what the task makes. */
  const templateFor = (job: RequestedJob): ComfyTemplate => templates[job.upstreamModel] ?? templates[DEFAULT_TEMPLATE[job.output.kind]]!;

  function refuse(job: RequestedJob): Refusal | undefined {
    const b = bindingOf(templateFor(job), job);
    return 'field' in b ? b : undefined;
  }

  async function look(what: string, path: string, ctx: CallContext): Promise<unknown> {
    const answer = await http.send('GET', path, undefined, ctx.signal, timeoutMs);
    if (!ok(answer)) throw callFailure(id, what, answer.status, answer.headers, answer.text, scrub);
    return parseJson(id, who, answer.text);
  }

  /** A prompt of this generation ComfyUI already has (queued by a start whose answer was lost: a crash, a lost lease). */
  async function earlierPrompt(promptId: string, mark: PromptMark, ctx: CallContext): Promise<string | undefined> {
    const place = queuePlace(id, who, await look('the queue query', '/queue', ctx), promptId, mark);
    if (place.state !== 'absent') return place.promptId;
    const history = historyEntryOf(id, who, await look('the history query', `/history/${encodeURIComponent(promptId)}`, ctx), promptId);
    return history ? promptId : undefined;
  }

  /** Uploads each caller image of the binding; the names ComfyUI stored them under, by slot. */
  async function upload(job: ProviderJob, b: ComfyBinding, ctx: ProviderContext): Promise<Record<string, string>> {
    const names: Record<string, string> = {};
    for (const [slot, ref] of Object.entries(b.media)) {
      let data = await ctx.readMedia(ref, MAX_UPLOAD_BYTES);
      let type = isImageBytes(data) ?? 'application/octet-stream';
      // what ComfyUI's image loader (PIL) reads everywhere; anything else goes as PNG
      if (!['image/png', 'image/jpeg', 'image/webp'].includes(type)) {
        const sharp = await loadSharp();
        data = await sharp(data)
          .png()
          .toBuffer()
          .catch((err: unknown) => {
            throw new UnrecoverableError(`${ref.field}: the image cannot be decoded to hand it to ComfyUI`, { cause: err, param: ref.field });
          });
        type = 'image/png';
      }
      const ext = Object.values(MEDIA_FORMATS).find((f) => f.contentType === type)!.ext;
      const answer = await http.uploadImage(
        { name: `${job.taskId}-g${job.generation}-${slot}.${ext}`, contentType: type, data },
        UPLOAD_SUBFOLDER,
        ctx.signal,
        timeoutMs,
      );
      if (!ok(answer)) throw callFailure(id, `the upload of ${ref.field}`, answer.status, answer.headers, answer.text, scrub);
      const stored = parseJson(id, who, answer.text) as { name?: unknown; subfolder?: unknown } | null;
      if (typeof stored?.name !== 'string' || stored.name === '') throw malformedReply(id, 'an upload answer without name', who);
      names[slot] = typeof stored.subfolder === 'string' && stored.subfolder !== '' ? `${stored.subfolder}/${stored.name}` : stored.name;
    }
    return names;
  }

  async function start(job: ProviderJob, ctx: ProviderContext): Promise<StartResult> {
    ctx.signal.throwIfAborted();
    const template = templateFor(job);
    const binding = bindingOf(template, job);
    if ('field' in binding) throw new UnrecoverableError(`${binding.field}: ${binding.message}`, { param: binding.field });
    const data: ComfyRefData = { kind: template.makes, template: template.name, ...(template.outputs && { outputs: template.outputs }) };
    const promptId = promptIdOf(job.taskId, job.generation);
    const mark: PromptMark = { task: job.taskId, generation: job.generation };
    const earlier = await earlierPrompt(promptId, mark, ctx);
    if (earlier !== undefined) {
      ctx.log.warn(
        { taskId: job.taskId, provider: id, promptId: earlier, generation: job.generation },
        "comfyui already has this generation's prompt (an earlier start's answer was lost): following it",
      );
      return { state: 'started', ref: { id: earlier, data: { ...data } } };
    }
    const uploaded = await upload(job, binding, ctx);
    const { workflow, fieldOfInput } = workflowOf(template, binding, uploaded, seedOf(job.taskId, job.generation));
    const body = { prompt: workflow, client_id: clientId, prompt_id: promptId, extra_data: { mediagate: mark } };
    const answer = await http.send('POST', '/prompt', body, ctx.signal, timeoutMs);
    if (!ok(answer)) {
      ctx.log.info({ taskId: job.taskId, provider: id, status: answer.status, template: template.name }, 'comfyui refused the prompt');
      throw promptFailure(id, answer.status, answer.headers, answer.text, scrub, template.name, fieldOfInput);
    }
    const queued = parseJson(id, who, answer.text) as { prompt_id?: unknown; number?: unknown; node_errors?: unknown } | null;
    if (typeof queued?.prompt_id !== 'string' || queued.prompt_id === '') throw malformedReply(id, 'a prompt answer without prompt_id', who);
    const partial = queued.node_errors && typeof queued.node_errors === 'object' ? Object.keys(queued.node_errors) : [];
    ctx.log.info(
      {
        taskId: job.taskId,
        provider: id,
        promptId: queued.prompt_id,
        number: queued.number,
        template: template.name,
        ...(queued.prompt_id !== promptId && { note: 'this ComfyUI chose its own prompt id (older than client prompt ids)' }),
        ...(partial.length > 0 && { nodesWithErrors: partial }),
      },
      'comfyui prompt queued',
    );
    return { state: 'started', ref: { id: queued.prompt_id, data: { ...data } } };
  }

  async function check(ref: UpstreamRef, job: ProviderJob, ctx: CallContext): Promise<CheckResult> {
    const d = (ref.data ?? {}) as Partial<ComfyRefData>;
    // the queue first: while the prompt waits or runs, that one look is the check
    const place = queuePlace(id, who, await look('the queue query', '/queue', ctx), ref.id);
    if (place.state === 'pending') return { state: 'pending', progress: queueProgress(place.ahead) };
    if (place.state === 'running') return { state: 'pending' }; // the engine's time estimate (G129)
    const entry = historyEntryOf(id, who, await look('the history query', `/history/${encodeURIComponent(ref.id)}`, ctx), ref.id);
    if (!entry) return { state: 'failed', error: lostPrompt(id, ref.id) };
    const succeeded = entry.status?.status_str === undefined || entry.status.status_str === 'success';
    ctx.log.info({ taskId: job.taskId, provider: id, promptId: ref.id, status: entry.status?.status_str ?? null }, 'comfyui prompt ended');
    if (!succeeded) return { state: 'failed', error: executionFailure(id, entry.status, scrub) };
    const kind = d.kind ?? (job.output.kind as RemoteFile['kind']);
    const all = outputFiles(entry.outputs, d.outputs);
    const files = all.filter((f) => f.kind === kind);
    if (files.length === 0) {
      const made = all.map((f) => f.filename).join(', ') || 'no output file';
      return { state: 'failed', error: new Error(`${who}: the template "${d.template ?? '?'}" made no ${kind} file (it made ${made})`) };
    }
    const headers = http.authHeaders();
    return {
      state: 'completed',
      output: { files: files.map((f) => ({ url: http.viewUrl(f), kind, trusted: true, ...(Object.keys(headers).length > 0 && { headers }) })) },
    };
  }

  async function cancel(ref: UpstreamRef, job: ProviderJob, ctx: CallContext): Promise<void> {
    const place = queuePlace(id, who, await look('the queue query', '/queue', ctx), ref.id);
    if (place.state === 'absent') return; // ended, or gone: nothing left to stop
    const [path, body] = place.state === 'pending' ? ['/queue', { delete: [ref.id] }] : ['/interrupt', { prompt_id: ref.id }];
    const answer = await http.send('POST', path, body, ctx.signal, timeoutMs);
    if (!ok(answer)) throw callFailure(id, `the cancel (${path})`, answer.status, answer.headers, answer.text, scrub);
    ctx.log.info(
      { taskId: job.taskId, provider: id, promptId: ref.id, how: place.state === 'pending' ? 'deleted from the queue' : 'interrupted' },
      'comfyui prompt cancelled',
    );
  }

  return {
    id,
    // a start finds this generation's prompt before queueing it again (G155, G453)
    idempotentCreates: true,
    // the queue's state: a status call of ComfyUI's API
    probe: async (signal) => probeResult('GET /queue', await http.send('GET', '/queue', undefined, signal, PROBE_TIMEOUT_MS)),
    capabilities: { families: FAMILIES },
    ...tuningOf(options),
    refuse,
    start,
    check,
    cancel,
    close: () => http.close(),
  };
}
