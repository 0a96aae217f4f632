/**
 * How ComfyUI's failures become the gateway's (G154). `POST /prompt` validates the
 * workflow before queueing it and answers 400 `{error: {type, message, details, extra_info},
 * node_errors: {node id: {class_type, errors: [{type, message, details, extra_info: {input_name}}]}}}`:
 * an error on an input a request field was written into fails the task naming that field (the
 * caller's value: a size, a seed, an image ComfyUI cannot read); any other (a checkpoint that is not
 * installed, a node type it does not have, a workflow without outputs) is the template's or that
 * server's fault: a ChannelError naming the template, node and input, so the start moves on to the
 * next candidate and the operator sees what to fix. A prompt that ran and failed (`execution_error`
 * in its history status: a node raised, the GPU ran out of memory) is a failed generation a new one
 * may follow; so is one ComfyUI no longer knows (restarted) or one interrupted there by someone
 * else. Messages name the provider id, never ComfyUI's address or the key.
 */
import { channelFault, type Headers, type Scrub } from '../toolkit/errors.js';
import { ChannelError, UnrecoverableError } from '../types.js';
import { statusMessages, type HistoryEntry } from './reply.js';

export const whoOf = (id: string): string => `the ComfyUI upstream "${id}"`;

interface NodeError {
  type?: string;
  message?: string;
  details?: string;
  extra_info?: { input_name?: string };
}

const obj = (v: unknown): Record<string, unknown> | undefined => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined);
const clip = (s: string, n = 300): string => (s.length > n ? `${s.slice(0, n - 3)}...` : s);

/** The reason and the node errors of a refused prompt. */
function refusalOf(text: string): { error: NodeError | undefined; nodes: Array<{ node: string; classType: string; errors: NodeError[] }> } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { error: text.trim() ? { message: text.trim() } : undefined, nodes: [] };
  }
  const o = obj(json) ?? {};
  const error = typeof o.error === 'string' ? { message: o.error } : (obj(o.error) as NodeError | undefined);
  const nodes = Object.entries(obj(o.node_errors) ?? {}).map(([node, raw]) => {
    const n = obj(raw) ?? {};
    const errors = Array.isArray(n.errors) ? n.errors.map((e) => (obj(e) ?? {}) as NodeError) : [];
    return { node, classType: typeof n.class_type === 'string' ? n.class_type : '?', errors };
  });
  return { error, nodes };
}

const describe = (e: NodeError): string => [e.message, e.details].filter((s) => typeof s === 'string' && s !== '').join(': ');

/**
 * A non-2xx answer to `POST /prompt`: nothing was queued. `fieldOfInput`: the request field each
 * written input came from (`"5.width"` -> `size`).
 */
export function promptFailure(
  id: string,
  status: number,
  headers: Headers,
  text: string,
  scrub: Scrub,
  template: string,
  fieldOfInput: Record<string, string>,
): Error {
  const who = whoOf(id);
  const { error, nodes } = refusalOf(text);
  const said = scrub(error ? describe(error) : '');
  const fault = channelFault(id, status, headers, clip(said), who);
  if (fault) return fault;
  if (status !== 400) return new ChannelError(`${who} refused the prompt (HTTP ${status}; is it a ComfyUI server?)${said ? `: ${clip(said)}` : ''}`);
  for (const { node, errors } of nodes) {
    for (const e of errors) {
      const input = e.extra_info?.input_name;
      const field = input === undefined ? undefined : fieldOfInput[`${node}.${input}`];
      if (field !== undefined)
        return new UnrecoverableError(
          `${field}: ComfyUI refused the value written into ${node}.${input} of template "${template}": ${clip(scrub(describe(e)))}`,
          { param: field },
        );
    }
  }
  const first = nodes.find((n) => n.errors.length > 0);
  const where = first
    ? `node ${first.node} (${first.classType})${first.errors[0]!.extra_info?.input_name ? ` input ${first.errors[0]!.extra_info.input_name}` : ''}: ${scrub(describe(first.errors[0]!))}`
    : said || `HTTP ${status}`;
  return new ChannelError(
    `${who} cannot run the template "${template}" (${error?.type ?? 'invalid prompt'}): ${clip(where)}; check the workflow and the models and custom nodes installed there`,
  );
}

/** A non-2xx answer to a look (`/queue`, `/history`), a cancel or an upload: the channel's, looked at again later. */
export function callFailure(id: string, what: string, status: number, headers: Headers, text: string, scrub: Scrub): ChannelError {
  const who = whoOf(id);
  const said = clip(scrub(refusalOf(text).error?.message ?? ''));
  return channelFault(id, status, headers, said, who) ?? new ChannelError(`${who} refused ${what} (HTTP ${status})${said ? `: ${said}` : ''}`);
}

const OOM = /OutOfMemoryError|out of memory|CUDA error: out of memory|Allocation on device/i;

/**
 * Why a prompt that ended without success failed: its `execution_error` (node, type, message), or
 * an interruption not asked by this gateway. Every one is a failed generation (a new one may run:
 * memory freed, another server of the route); none is the caller's to fix.
 */
export function executionFailure(id: string, status: HistoryEntry['status'], scrub: Scrub): Error {
  const who = whoOf(id);
  const messages = statusMessages(status);
  const error = messages.find(([event]) => event === 'execution_error')?.[1];
  if (error) {
    const node = `node ${String(error.node_id ?? '?')} (${String(error.node_type ?? '?')})`;
    const message = scrub(String(error.exception_message ?? '').split('\n')[0] ?? '');
    const type = String(error.exception_type ?? 'an error');
    const oom = OOM.test(`${type} ${String(error.exception_message ?? '')}`);
    return new Error(`${who}: the workflow failed in ${node}${oom ? ', out of GPU memory' : ''}: ${type}${message ? `: ${clip(message)}` : ''}`);
  }
  if (messages.some(([event]) => event === 'execution_interrupted')) return new Error(`${who}: the prompt was interrupted there (not by this gateway)`);
  return new Error(`${who}: the prompt ended with status ${JSON.stringify(status?.status_str ?? null)} and no error message`);
}

/** A prompt ComfyUI no longer knows: neither queued, running nor in its history. */
export const lostPrompt = (id: string, promptId: string): Error =>
  new Error(
    `${whoOf(id)} no longer knows prompt ${promptId} (not queued, not running, not in its history: ComfyUI restarted, or the prompt was deleted there)`,
  );
