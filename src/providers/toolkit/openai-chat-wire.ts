/**
 * The OpenAI chat protocol as both chat providers that speak it use it (`openai/`: any
 * OpenAI-compatible upstream; `relay/`: an upstream mediagate): the upstream body, finish reasons,
 * the call's time bounds, aborts (G50-G59).
 */
import { AppError } from '../../errors.js';
import type { ChatContext, ChatMessage, ChatRequest, FinishReason } from '../../chat/types.js';

/** Which field carries `max_completion_tokens` upstream (G52). */
export type MaxTokensParam = 'max_completion_tokens' | 'max_tokens' | 'both';

/** Our request as the upstream's `/chat/completions` body (G51, G52). */
export function toUpstreamBody(
  req: ChatRequest,
  upstreamModel: string,
  stream: boolean,
  maxTokensParam: MaxTokensParam = 'max_completion_tokens',
): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model: upstreamModel,
    messages: req.messages.map((m: ChatMessage) => ({
      role: m.role,
      content:
        typeof m.content === 'string'
          ? m.content
          : m.content.map((p) => (p.type === 'text' ? { type: 'text', text: p.text } : { type: 'image_url', image_url: { url: p.image_url.url } })),
    })),
  };
  if (req.temperature !== undefined) body.temperature = req.temperature;
  if (req.top_p !== undefined) body.top_p = req.top_p;
  if (req.max_completion_tokens !== undefined) {
    if (maxTokensParam !== 'max_tokens') body.max_completion_tokens = req.max_completion_tokens;
    if (maxTokensParam !== 'max_completion_tokens') body.max_tokens = req.max_completion_tokens;
  }
  if (req.stop.length > 0) body.stop = req.stop;
  if (req.presence_penalty !== undefined) body.presence_penalty = req.presence_penalty;
  if (req.frequency_penalty !== undefined) body.frequency_penalty = req.frequency_penalty;
  if (stream) {
    body.stream = true;
    body.stream_options = { include_usage: true };
  }
  return body;
}

/** The upstream's finish_reason in our two values (G54). */
export function mapFinishReason(value: unknown): FinishReason {
  return value === 'length' || value === 'max_tokens' ? 'length' : 'stop';
}

/**
 * One upstream call's lifetime: an abort controller fed by the caller's signal, the total timer
 * and (streams) the stall timer. `fail()` records why the call was cut so the catch can say so.
 */
export class CallGuard {
  readonly controller = new AbortController();
  private reason: unknown;
  private total: NodeJS.Timeout | undefined;
  private stall: NodeJS.Timeout | undefined;
  private readonly onCallerAbort: () => void;

  constructor(
    private readonly ctx: ChatContext,
    private readonly upstream: string,
    timeoutMs: number,
  ) {
    this.onCallerAbort = () => this.abort(ctx.signal.reason instanceof Error ? ctx.signal.reason : abortError());
    if (ctx.signal.aborted) this.onCallerAbort();
    else ctx.signal.addEventListener('abort', this.onCallerAbort, { once: true });
    this.total = setTimeout(
      () => this.abort(new AppError('upstream_timeout', `The chat upstream "${upstream}" did not finish its reply within ${timeoutMs} ms`)),
      timeoutMs,
    );
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  startStallTimer(ms: number): void {
    this.stall = setTimeout(
      () => this.abort(new AppError('upstream_timeout', `The chat upstream "${this.upstream}" sent nothing for ${ms} ms in the middle of a reply`)),
      ms,
    );
  }

  /** Something arrived: the stall timer starts over. */
  alive(): void {
    this.stall?.refresh();
  }

  abort(reason: unknown): void {
    if (this.reason !== undefined) return;
    this.reason = reason;
    this.controller.abort(reason);
  }

  /** Why the call was cut (timeout AppError, the caller's reason), or undefined if it was not. */
  get cut(): unknown {
    return this.reason;
  }

  /** The reply is complete: no more timeouts or caller aborts, but stop reading the rest after `ms`. */
  drain(ms: number): void {
    this.dispose();
    this.total = setTimeout(() => this.controller.abort(abortError()), ms);
  }

  dispose(): void {
    clearTimeout(this.total);
    clearTimeout(this.stall);
    this.ctx.signal.removeEventListener('abort', this.onCallerAbort);
  }
}

/** Upstream statuses that are the channel's fault, not the request's. */
export function isChannelFault(status: number): boolean {
  return status === 401 || status === 402 || status === 403 || status === 408 || status === 429 || status >= 500;
}

export function abortError(): Error {
  const e = new Error('The chat request was aborted by the caller');
  e.name = 'AbortError';
  return e;
}
