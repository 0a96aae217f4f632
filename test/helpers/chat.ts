import type { ChatContext, ChatProvider, ChatRequest, ChatStreamEvent, FinishReason } from '../../src/chat/types.js';

/** One parsed SSE block: its `data:` payload (joined) and any comment lines. */
export interface SseBlock {
  data: string | undefined;
  comments: string[];
  raw: string;
}

/** Splits a raw `text/event-stream` body into blocks, the way an SSE reader does. */
export function parseSse(text: string): SseBlock[] {
  return text
    .split(/\r?\n\r?\n/)
    .filter((b) => b.trim() !== '')
    .map((raw) => {
      const data: string[] = [];
      const comments: string[] = [];
      for (const line of raw.split(/\r?\n/)) {
        if (line.startsWith(':')) comments.push(line.slice(1).trim());
        else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
      }
      return { data: data.length > 0 ? data.join('\n') : undefined, comments, raw };
    });
}

/** The JSON payloads of the data events, `[DONE]` left as the string. */
export function sseData(text: string): Array<Record<string, any> | '[DONE]'> {
  return parseSse(text).flatMap((b) => (b.data === undefined ? [] : [b.data === '[DONE]' ? '[DONE]' : (JSON.parse(b.data) as Record<string, any>)]));
}

export interface ScriptStep {
  /** Wait this long before the step (ms), abortable. */
  delayMs?: number;
  delta?: string;
  /** Throw this instead of yielding. */
  fail?: Error;
}

export interface ScriptedProvider extends ChatProvider {
  /** Signals of every call, to observe aborts. */
  signals: AbortSignal[];
  requests: ChatRequest[];
  /** Events handed out so far (all calls). */
  pulled: number;
}

/** A chat provider playing a fixed script: deltas with delays, optional failure, then done. */
export function scriptedProvider(id: string, steps: ScriptStep[], finish: FinishReason = 'stop'): ScriptedProvider {
  const provider: ScriptedProvider = {
    id,
    signals: [],
    requests: [],
    pulled: 0,
    async complete(request, ctx) {
      let content = '';
      for await (const e of provider.stream(request, ctx)) {
        if (e.type === 'delta') content += e.content;
        else if (e.type === 'done') return { content, finishReason: e.finishReason, usage: e.usage };
      }
      throw new Error('no done event');
    },
    stream(request: ChatRequest, ctx: ChatContext): AsyncIterable<ChatStreamEvent> {
      provider.signals.push(ctx.signal);
      provider.requests.push(request);
      return (async function* () {
        let n = 0;
        for (const step of steps) {
          if (step.delayMs) await abortableSleep(step.delayMs, ctx.signal);
          if (ctx.signal.aborted) throw new Error('aborted');
          if (step.fail) throw step.fail;
          if (step.delta !== undefined) {
            n++;
            provider.pulled++;
            yield { type: 'delta', content: step.delta };
          }
        }
        yield { type: 'done', finishReason: finish, usage: { prompt_tokens: 7, completion_tokens: n, total_tokens: 7 + n } };
      })();
    },
  };
  return provider;
}

export function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(new Error('aborted'));
      return;
    }
    const t = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(new Error('aborted'));
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
