import { describe, expect, it } from 'vitest';
import { createLogger } from '../logger.js';
import type { ChatUsageRecord, UsageStore } from '../store/types.js';
import { Channels } from '../providers/channels.js';
import { chatOnlyProvider, chatRoutesOf, ProviderRegistry } from '../providers/registry.js';
import { ChannelError } from '../providers/types.js';
import { ChatService, type ChatCall, type ChatEventSink } from './service.js';
import type { ChatProvider, ChatRequest, ChatStreamEvent } from './types.js';

// The chat service without HTTP: a fake event sink and a scripted provider.

class RecordingSink implements ChatEventSink {
  readonly events: string[] = [];
  closed = false;
  private held: string[] = [];
  get isClosed(): boolean {
    return this.closed;
  }
  holdJson(json: string): void {
    this.held.push(json);
  }
  flushSoon(): void {
    this.flush();
  }
  async ping(): Promise<void> {
    this.flush();
    this.events.push(': ping');
  }
  sendJson(json: string): undefined {
    this.flush();
    this.events.push(json);
    return undefined;
  }
  async send(data: unknown): Promise<void> {
    this.sendJson(JSON.stringify(data));
  }
  async done(): Promise<void> {
    this.flush();
    this.events.push('[DONE]');
    this.end();
  }
  end(): void {
    this.flush();
    this.closed = true;
  }
  private flush(): void {
    this.events.push(...this.held);
    this.held = [];
  }
}

function scripted(events: Array<ChatStreamEvent | Error>, onDelta?: (i: number) => void): ChatProvider {
  return {
    id: 'scripted',
    complete: async () => {
      throw new Error('not used');
    },
    async *stream(_request, ctx) {
      let deltas = 0;
      for (const e of events) {
        ctx.signal.throwIfAborted(); // as every provider does: an abort stops it
        if (e instanceof Error) throw e;
        if (e.type === 'delta') onDelta?.(deltas++);
        yield e;
      }
    },
  };
}

/** A chat service whose every chat model is routed to `providers`, in order (the first tried first). */
function setup(...chatProviders: ChatProvider[]) {
  const rows: ChatUsageRecord[] = [];
  const usage: UsageStore = {
    recordChatUsage: async (r) => {
      rows.push(r);
    },
    chatUsageByKey: async () => [],
  };
  const log = createLogger('silent');
  const routes = Object.fromEntries(
    Object.entries(chatRoutesOf({ '*': chatProviders[0]!.id })).map(([model]) => [
      model,
      chatProviders.map((p, priority) => ({ provider: p.id, priority, weight: 1 })),
    ]),
  );
  const channels = new Channels({ log, concurrencyOf: () => 4, breaker: { failuresToOpen: 2, openMs: 60_000, maxOpenMs: 60_000 } });
  const service = new ChatService({ providers: new ProviderRegistry(chatProviders.map(chatOnlyProvider), routes), channels, usage, heartbeatMs: 0 });
  return { service, rows, channels };
}

/** A provider whose every call is refused as a channel fault (a 503 at the upstream), counting them. */
function refusing(id: string, calls: { n: number }): ChatProvider {
  const fault = () => new ChannelError(`The chat upstream "${id}" failed (HTTP 503)`);
  return {
    id,
    complete: async () => {
      calls.n++;
      throw fault();
    },
    // biome-ignore lint/correctness/useYield: refused before its first event
    async *stream() {
      calls.n++;
      throw fault();
    },
  };
}

const request: ChatRequest = { model: 'chat-2.5-flash', messages: [{ role: 'user', content: 'hi' }], stop: [] };
const call = (signal = new AbortController().signal): ChatCall => ({ keyId: 'key_1', accountId: 'acct_1', request, signal, log: createLogger('silent') });
const usageOf = (p: number, c: number) => ({ prompt_tokens: p, completion_tokens: c, total_tokens: p + c });

describe('ChatService.stream', () => {
  it("role, deltas, finish, usage, [DONE], and one usage row with the provider's counts", async () => {
    const { service, rows } = setup(
      scripted([
        { type: 'open' },
        { type: 'delta', content: 'Hel' },
        { type: 'delta', content: 'lo' },
        { type: 'done', finishReason: 'stop', usage: usageOf(7, 2) },
      ]),
    );
    const sink = new RecordingSink();
    expect(await service.stream(call(), () => sink)).toBe('streamed');
    const chunks = sink.events.filter((e) => e.startsWith('{')).map((e) => JSON.parse(e));
    expect(chunks.map((c) => c.choices[0]?.delta ?? null)).toEqual([{ role: 'assistant', content: '' }, { content: 'Hel' }, { content: 'lo' }, {}, null]);
    expect(chunks[3].choices[0].finish_reason).toBe('stop');
    expect(chunks[4].usage).toEqual(usageOf(7, 2));
    expect(sink.events.at(-1)).toBe('[DONE]');
    expect(rows).toMatchObject([{ keyId: 'key_1', model: 'chat-2.5-flash', promptTokens: 7, completionTokens: 2 }]);
  });

  it('a failure before the first event is thrown (an HTTP error), and the stream is never opened', async () => {
    const { service, rows } = setup(scripted([new Error('upstream down')]));
    let opened = false;
    await expect(
      service.stream(call(), () => {
        opened = true;
        return new RecordingSink();
      }),
    ).rejects.toThrow('upstream down');
    expect(opened).toBe(false);
    expect(rows).toEqual([]);
  });

  it('a failure after the stream opened ends it with an error event and no [DONE]; what was generated is billed (G206)', async () => {
    const { service, rows } = setup(scripted([{ type: 'open' }, { type: 'delta', content: 'a' }, new Error('broke')]));
    const sink = new RecordingSink();
    await service.stream(call(), () => sink);
    const last = JSON.parse(sink.events.at(-1)!);
    expect(last.error).toMatchObject({ code: 'internal_error', type: 'server_error' });
    expect(sink.events).not.toContain('[DONE]');
    expect(rows).toMatchObject([{ keyId: 'key_1', model: 'chat-2.5-flash', completionTokens: 1 }]);
  });

  it('a client that leaves mid-stream stops the provider; what was sent is billed with counted tokens', async () => {
    const controller = new AbortController();
    const { service, rows } = setup(
      scripted(
        [
          { type: 'open' },
          { type: 'delta', content: 'one' },
          { type: 'delta', content: ' two' },
          { type: 'delta', content: ' three' },
          { type: 'done', finishReason: 'stop', usage: usageOf(1, 1) },
        ],
        (i) => {
          if (i === 1) controller.abort();
        },
      ),
    );
    const sink = new RecordingSink();
    expect(await service.stream(call(controller.signal), () => sink)).toBe('streamed');
    expect(sink.events.join('')).not.toContain('three');
    expect(rows).toHaveLength(1);
    expect(rows[0]!.completionTokens).toBeGreaterThan(0); // "one two": counted, not the provider's done usage
    expect(rows[0]!.completionTokens).not.toBe(1);
  });
});

describe('ChatService: failover between channels (G90, G91)', () => {
  const answer = (id: string): ChatProvider => ({
    id,
    complete: async () => ({ content: `from ${id}`, finishReason: 'stop', usage: usageOf(1, 1) }),
    async *stream() {
      yield { type: 'delta', content: `from ${id}` };
      yield { type: 'done', finishReason: 'stop', usage: usageOf(1, 1) };
    },
  });

  it('a channel fault of the first candidate hands the call to the next, streamed or not', async () => {
    const calls = { n: 0 };
    const { service } = setup(refusing('down', calls), answer('up'));
    expect((await service.complete(call())).data.content).toBe('from up');
    const sink = new RecordingSink();
    expect(await service.stream(call(), () => sink)).toBe('streamed');
    expect(sink.events.join('\n')).toContain('from up');
    expect(calls.n).toBe(2);
  });

  it("the last candidate's fault is the answer; once every circuit is open: 503 upstream_unavailable, no call made", async () => {
    const calls = { n: 0 };
    const { service, channels } = setup(refusing('down', calls));
    await expect(service.complete(call())).rejects.toMatchObject({
      code: 'upstream_error',
      status: 502,
      message: 'The chat upstream "down" failed (HTTP 503)',
    });
    await expect(service.complete(call())).rejects.toMatchObject({ code: 'upstream_error' });
    expect(channels.state('down')).toBe('open');
    const err = await service.complete(call()).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'upstream_unavailable', status: 503 });
    expect((err as { headers: Record<string, string> }).headers['retry-after']).toBe('60');
    await expect(service.stream(call(), () => new RecordingSink())).rejects.toMatchObject({ code: 'upstream_unavailable' });
    expect(calls.n).toBe(2);
  });

  it("a failure that is not the channel's (the request's own) is the answer at once: no other channel is tried", async () => {
    const other = { n: 0 };
    const bad: ChatProvider = {
      id: 'bad',
      complete: async () => {
        throw Object.assign(new Error('context too long'), { code: 'x' });
      },
      stream: refusing('x', other).stream,
    };
    const { service } = setup(bad, {
      ...answer('up'),
      complete: async () => {
        other.n++;
        return { content: '', finishReason: 'stop', usage: usageOf(0, 0) };
      },
    });
    await expect(service.complete(call())).rejects.toThrow('context too long');
    expect(other.n).toBe(0);
  });
});
