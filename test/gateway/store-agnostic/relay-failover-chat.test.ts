/**
 * Chat failover over HTTP (G90, G98, G120): a relaying mediagate routes every chat
 * model to relay channel `a`, then `b`, each an upstream mediagate (sandbox chat) behind a fault
 * proxy. A chat call the first channel cannot take (connection refused, 503) is answered by the
 * second, streamed or not; the caller sees one ordinary reply. With both down the caller gets an
 * error that names the channel by its id, never an address or a key. (The unit-level version:
 * src/chat/service.test.ts.)
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { sseData } from '../../helpers/chat.js';
import { startRelayCandidates, type RelayCandidates } from '../../helpers/relay-candidates.js';

let r: RelayCandidates;
beforeAll(async () => {
  // circuits that do not open in this file: every call tries `a` first
  r = await startRelayCandidates({ relaying: { breaker: { failuresToOpen: 1_000, openMs: 60_000, maxOpenMs: 60_000 } } });
}, 60_000);
afterEach(async () => {
  r.a.proxy.clearRules();
  await r.a.proxy.setDown(false);
  await r.b.proxy.setDown(false);
});
afterAll(async () => {
  await r?.close();
});

let n = 0;
/** A chat body whose user message marks it, so its calls can be told apart at the proxies. */
function chatBody(extra: Record<string, unknown> = {}): { body: Record<string, unknown>; mark: string } {
  const mark = `failover call ${n++}`;
  return {
    mark,
    body: { model: 'chat-2.5-flash', messages: [{ role: 'user', content: `Say something about ${mark}.` }], max_completion_tokens: 12, ...extra },
  };
}
const chatCalls = (channel: 'a' | 'b', mark: string) =>
  r[channel].proxy.requests.filter((q) => q.method === 'POST' && q.url === '/v1/chat/completions' && q.body.includes(mark));

describe('chat through two relay channels', () => {
  it('the first refuses connections: the second answers the envelope', async () => {
    await r.a.proxy.setDown(true);
    const { body, mark } = chatBody();
    const res = await r.call('POST', '/v1/chat/completions', body);
    expect(res.status, res.text).toBe(200);
    expect(res.json).toMatchObject({
      code: '200',
      success: true,
      data: { model: 'chat-2.5-flash', finish_reason: 'length', usage: { completion_tokens: 12 } },
    });
    expect(res.json.data.content.length).toBeGreaterThan(0);
    const atB = chatCalls('b', mark);
    expect(atB).toHaveLength(1);
    expect(atB[0]).toMatchObject({ status: 200, headers: { authorization: `Bearer ${r.b.upstream.key}` } });
    expect(r.a.proxy.requests.filter((q) => q.body.includes(mark))).toEqual([]);
  });

  it('the first answers 503: the second streams the reply, and the caller sees one ordinary stream', async () => {
    const refuse = r.a.proxy.addRule({ match: { path: '/v1/chat/completions' }, fault: { status: 503 } });
    const { body, mark } = chatBody({ stream: true });
    const res = await r.call('POST', '/v1/chat/completions', body);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = sseData(res.text);
    const chunks = events.filter((e): e is Record<string, any> => e !== '[DONE]');
    expect(chunks.some((e) => e.error)).toBe(false);
    expect(chunks.filter((e) => typeof e.choices?.[0]?.delta?.content === 'string' && e.choices[0].delta.content !== '').length).toBeGreaterThan(0);
    expect(chunks.find((e) => e.choices?.[0]?.finish_reason)?.choices[0].finish_reason).toBe('length');
    expect(chunks.find((e) => e.usage)?.usage.completion_tokens).toBe(12);
    expect(events.at(-1)).toBe('[DONE]');
    expect(refuse.applied).toBe(1);
    expect(chatCalls('a', mark)).toEqual([expect.objectContaining({ action: 'status', status: 503 })]);
    expect(chatCalls('b', mark)).toEqual([expect.objectContaining({ status: 200 })]);
  });

  it('both down, streamed or not: a 502 naming the last channel tried by its id, never an address or a key', async () => {
    await r.a.proxy.setDown(true);
    await r.b.proxy.setDown(true);
    for (const stream of [false, true]) {
      const { body } = chatBody({ stream });
      const res = await r.call('POST', '/v1/chat/completions', body);
      expect(res.status, res.text).toBe(502);
      // chat's own error body: the status as `code`, the reason naming the last channel tried by its id
      expect(res.json).toMatchObject({ code: '502', success: false, data: null });
      expect(res.json.msg).toMatch(/the relay upstream "b"/);
      for (const secret of [
        r.a.proxy.url,
        r.b.proxy.url,
        `:${r.a.proxy.port}`,
        `:${r.b.proxy.port}`,
        r.a.upstream.key,
        r.b.upstream.key,
        '127.0.0.1',
        'ECONNREFUSED',
      ]) {
        expect(res.text).not.toContain(secret);
      }
    }
  });
});
