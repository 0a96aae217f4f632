import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../../src/errors.js';
import { createRelayProvider, type RelayProviderOptions } from '../../../src/providers/relay/index.js';
import { ChannelError, UnrecoverableError, type Provider } from '../../../src/providers/types.js';
import { startRelayPair, type RelayPair } from '../../helpers/relay-pair.js';
import { chatContext, chatRequest, context, failureOf, KEY, picJob } from '../../helpers/relay-unit.js';

/** No message may name where the upstream is or the key. */
function expectNoSecrets(err: Error, ...addresses: string[]): void {
  for (const a of [KEY, ...addresses]) expect(err.message).not.toContain(a);
}

describe('against an upstream mediagate', () => {
  let pair: RelayPair;
  const providers: Provider[] = [];
  const relayTo = (options: Partial<RelayProviderOptions> = {}): Provider => {
    const p = createRelayProvider({
      id: 'up',
      baseUrl: pair.proxy.url,
      powerBaseUrl: `${pair.proxy.url}/power`,
      apiBaseUrl: `${pair.proxy.url}/api`,
      apiKey: pair.upstream.key,
      ...options,
    });
    providers.push(p);
    return p;
  };
  beforeAll(async () => {
    pair = await startRelayPair({ routes: { 'pic-pro-stable': [{ provider: 'relay', priority: 0, weight: 1, model: 'pic-9000' }] } });
  }, 60_000);
  afterAll(async () => {
    for (const p of providers) await p.close?.();
    await pair?.close();
  });
  const host = () => new URL(pair.proxy.url).host;

  it("a field the upstream refuses: an UnrecoverableError with the upstream's reason and field", async () => {
    const err = await failureOf(relayTo().start!(picJob({ params: { prompt: 'x', size: '7:3' } }), context()));
    expect(err).toBeInstanceOf(UnrecoverableError);
    expect((err as UnrecoverableError).param).toBe('size');
    expect(err.message).toMatch(/^size must be one of: .*\(got "7:3"\)/);
    expectNoSecrets(err, host());
  });

  it("a wrong key: the channel's fault, naming the provider, not the key", async () => {
    const err = await failureOf(relayTo({ apiKey: KEY }).start!(picJob(), context()));
    expect(err).toBeInstanceOf(ChannelError);
    expect(err.message).toMatch(/the relay upstream "up" refused the gateway's credentials \(HTTP 401\)/);
    expectNoSecrets(err, host());
    const chat = await failureOf(relayTo({ apiKey: KEY }).chat!.complete(chatRequest, chatContext()));
    expect(chat).toBeInstanceOf(ChannelError);
    expect((chat as ChannelError).status).toBe(502);
    expectNoSecrets(chat, host());
  });

  it('a task the upstream does not know (lost): a failed generation, not a failed check', async () => {
    const result = await relayTo().check!(
      { id: 'task_never_made', data: { family: 'pic', form: null, query: { base: 'base', path: '/v1/result/task_never_made' } } },
      picJob(),
      context(),
    );
    expect(result.state).toBe('failed');
    const error = (result as { error: Error }).error;
    expect(error).not.toBeInstanceOf(UnrecoverableError);
    expect(error.message).toMatch(/no longer has the generation \(HTTP 404\)/);
  });

  it("a chat model name the upstream does not know: the gateway's configuration (502), not the caller's request", async () => {
    const err = await failureOf(relayTo().chat!.complete(chatRequest, chatContext('chat-9000')));
    expect(err).toBeInstanceOf(AppError);
    expect(err).not.toBeInstanceOf(ChannelError);
    expect((err as AppError).code).toBe('upstream_error');
    expect(err.message).toMatch(/does not serve model "chat-9000"/);
  });

  it('a chat request the upstream refuses: a 400 naming the field', async () => {
    const err = await failureOf(relayTo().chat!.complete({ ...chatRequest, messages: [] }, chatContext()));
    expect(err).toBeInstanceOf(AppError);
    expect(err).not.toBeInstanceOf(ChannelError);
    expect((err as AppError).status).toBe(400);
    expect((err as AppError).param).toBe('messages');
  });

  it("through a relaying gateway: a refused create fails the task at once with the upstream's reason, no upstream address in it", async () => {
    const res = await fetch(`${pair.relaying.origin}/v1/pic/images`, {
      method: 'POST',
      headers: { authorization: `Bearer ${pair.relaying.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'pic-pro-stable', prompt: 'renamed to a model the upstream lacks' }),
    });
    expect(res.status).toBe(200); // accepted here: the upstream create happens later (G89)
    const id = ((await res.json()) as { id: string }).id;
    const task = await pair.relaying.waitForTask(id, undefined, 20_000);
    expect(task).toMatchObject({ status: 'failed', attempts: 1 });
    expect(task.error).toMatch(/^model/);
    expect(task.error).toContain('pic-9000');
    expect(task.error).not.toContain(host());
    expect(pair.createsWithKey(id)).toHaveLength(1);
    const query = (await (await fetch(`${pair.relaying.origin}/v1/result/${id}`, { headers: { authorization: `Bearer ${pair.relaying.key}` } })).json()) as {
      error: string;
    };
    expect(query.error).toBe(task.error);
  });
});
