/**
 * The sandbox chat provider: no language model, a deterministic reply derived from the
 * conversation, real token counts (gpt-tokenizer), `max_completion_tokens` and stop sequences
 * honoured as a real model would, streamed at a configurable rate. Markers in the last user
 * message: `[fail]` fails before anything is generated, `[fail-midway]` fails halfway through.
 */
import { CHAT_CONTEXT_TOKENS, isVideoUrl, messageMediaUrls, messageText } from '../contract/chat.js';
import { AppError } from '../errors.js';
import { countPromptTokens, textPieces } from './tokens.js';
import type { ChatCompletion, ChatContext, ChatMessage, ChatProvider, ChatRequest, ChatStreamEvent, FinishReason } from './types.js';

export interface SandboxChatOptions {
  /** Tokens per second when generating; 0 = as fast as possible. */
  tokensPerSecond: number;
  /** Context length in tokens (default CHAT_CONTEXT_TOKENS). */
  contextTokens?: number;
  /** Provider id (default `sandbox`). */
  id?: string;
}

const QUOTE_CHARS = 200;
const MAX_NAMED_MEDIA = 10;
/** Longest file name quoted in a reply; longer ones are cut (the reply stays short whatever the URLs). */
const MAX_NAME_CHARS = 60;

export const SANDBOX_FAIL_MARKER = '[fail]';
export const SANDBOX_FAIL_MIDWAY_MARKER = '[fail-midway]';

function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error) return reason;
  const err = new Error('The operation was aborted');
  err.name = 'AbortError';
  return err;
}

/** Resolves after `ms`, or rejects at once when `signal` aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.reject(abortError(signal));
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortError(signal));
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

function fileName(url: string): string {
  let name: string;
  try {
    const parts = new URL(url).pathname.split('/').filter(Boolean);
    name = decodeURIComponent(parts[parts.length - 1] ?? '') || new URL(url).hostname;
  } catch {
    name = url;
  }
  return name.length > MAX_NAME_CHARS ? `${name.slice(0, MAX_NAME_CHARS)}...` : name;
}

/**
 * The first `max` characters of `text` with every run of whitespace as one space and none at the
 * ends (what `text.replace(/\s+/g, ' ').trim()` begins with), found without walking past them:
 * the sandbox quotes the question, whatever its size.
 */
function collapsedHead(text: string, max: number): { head: string; more: boolean } {
  const words = /\S+/g;
  let head = '';
  for (let m = words.exec(text); m !== null; m = words.exec(text)) {
    if (head.length > 0) head += ' ';
    head += m[0].slice(0, max + 1 - head.length);
    if (head.length > max) return { head: head.slice(0, max), more: true };
  }
  return { head, more: false };
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** The full deterministic reply to a conversation (before max tokens and stop sequences). */
export function sandboxReplyText(request: ChatRequest): string {
  const messages = request.messages;
  const lastUser: ChatMessage | undefined = [...messages].reverse().find((m) => m.role === 'user');
  const asked = lastUser ? collapsedHead(messageText(lastUser), QUOTE_CHARS) : { head: '', more: false };
  const counts = { system: 0, user: 0, assistant: 0 };
  for (const m of messages) counts[m.role]++;
  const media = lastUser ? messageMediaUrls(lastUser) : [];
  const images = media.filter((u) => !isVideoUrl(u)).map(fileName);
  const videos = media.filter(isVideoUrl).map(fileName);

  const sentences: string[] = [];
  if (!lastUser) sentences.push('There is no user message in this conversation, so there is no question to answer.');
  else if (asked.head === '') sentences.push('Your last message has no text.');
  else sentences.push(`You asked: "${asked.head}${asked.more ? '...' : ''}".`);
  const named = (kind: string, names: string[]) => {
    const shown = names.slice(0, MAX_NAMED_MEDIA).join(', ');
    const more = names.length > MAX_NAMED_MEDIA ? ` and ${names.length - MAX_NAMED_MEDIA} more` : '';
    return `${plural(names.length, kind)} (${shown}${more})`;
  };
  const attached = [images.length > 0 ? named('image', images) : '', videos.length > 0 ? named('video', videos) : ''].filter(Boolean);
  if (attached.length > 0) sentences.push(`You attached ${attached.join(' and ')}.`);
  sentences.push(`This conversation has ${plural(messages.length, 'message')} (${counts.system} system, ${counts.user} user, ${counts.assistant} assistant).`);
  sentences.push(`This is the mediagate sandbox answering as ${request.model}; the reply is derived from your conversation, not written by a language model.`);
  return sentences.join(' ');
}

interface Plan {
  promptTokens: number;
  /** The reply as token groups that each decode to whole characters. */
  pieces: Array<{ text: string; tokens: number }>;
  completionTokens: number;
  finishReason: FinishReason;
  failMidway: boolean;
}

/** What the sandbox will answer: reply text cut at the first stop sequence, then at the token budget. */
async function plan(request: ChatRequest, contextTokens: number): Promise<Plan> {
  const lastUser = [...request.messages].reverse().find((m) => m.role === 'user');
  const lastText = lastUser ? messageText(lastUser) : '';
  if (lastText.includes(SANDBOX_FAIL_MARKER)) {
    throw new AppError('upstream_error', `sandbox: the last user message contains ${SANDBOX_FAIL_MARKER}, so this completion fails on purpose`, {
      retryable: false,
    });
  }
  const promptTokens = await countPromptTokens(request);
  if (promptTokens >= contextTokens) {
    throw new AppError('invalid_request', `messages use ${promptTokens} tokens, more than the context length of ${request.model} (${contextTokens} tokens)`, {
      param: 'messages',
    });
  }
  let text = sandboxReplyText(request);
  const stopAt = Math.min(...request.stop.map((s) => text.indexOf(s)).filter((i) => i >= 0));
  if (Number.isFinite(stopAt)) text = text.slice(0, stopAt);
  const all = await textPieces(text);
  const budget = Math.min(request.max_completion_tokens ?? Infinity, contextTokens - promptTokens);
  const pieces: typeof all = [];
  let completionTokens = 0;
  for (const piece of all) {
    if (completionTokens + piece.tokens > budget) break;
    pieces.push(piece);
    completionTokens += piece.tokens;
  }
  const finishReason: FinishReason = pieces.length < all.length ? 'length' : 'stop';
  return { promptTokens, pieces, completionTokens, finishReason, failMidway: lastText.includes(SANDBOX_FAIL_MIDWAY_MARKER) };
}

const midwayError = () =>
  new AppError('upstream_error', `sandbox: the last user message contains ${SANDBOX_FAIL_MIDWAY_MARKER}, so this completion breaks halfway on purpose`, {
    retryable: false,
  });

export function createSandboxChatProvider(options: SandboxChatOptions): ChatProvider {
  const contextTokens = options.contextTokens ?? CHAT_CONTEXT_TOKENS;
  const msPerToken = options.tokensPerSecond > 0 ? 1000 / options.tokensPerSecond : 0;

  async function* generate(request: ChatRequest, ctx: ChatContext): AsyncGenerator<ChatStreamEvent> {
    if (ctx.signal.aborted) throw abortError(ctx.signal);
    const p = await plan(request, contextTokens);
    const started = Date.now();
    let sent = 0;
    const half = Math.floor(p.pieces.length / 2);
    yield { type: 'open' };
    for (const [i, piece] of p.pieces.entries()) {
      if (p.failMidway && i === half) throw midwayError();
      sent += piece.tokens;
      // Absolute schedule: token n is due at n / rate seconds, so timer lateness does not accumulate.
      await sleep(started + sent * msPerToken - Date.now(), ctx.signal);
      if (ctx.signal.aborted) throw abortError(ctx.signal);
      yield { type: 'delta', content: piece.text };
    }
    if (p.failMidway) throw midwayError();
    yield {
      type: 'done',
      finishReason: p.finishReason,
      usage: { prompt_tokens: p.promptTokens, completion_tokens: p.completionTokens, total_tokens: p.promptTokens + p.completionTokens },
    };
  }

  return {
    id: options.id ?? 'sandbox',
    async complete(request: ChatRequest, ctx: ChatContext): Promise<ChatCompletion> {
      let content = '';
      for await (const event of generate(request, ctx)) {
        if (event.type === 'delta') content += event.content;
        else if (event.type === 'done') return { content, finishReason: event.finishReason, usage: event.usage };
      }
      throw new AppError('internal_error', 'sandbox: the reply ended without a done event');
    },
    stream: (request, ctx) => generate(request, ctx),
  };
}
