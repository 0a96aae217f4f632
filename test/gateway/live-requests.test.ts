import { afterEach, describe, expect, it } from 'vitest';
import { createApiKey } from '../../src/auth/keys.js';
import { createSandboxChatProvider } from '../../src/chat/sandbox.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { waitFor } from '../helpers/wait-for.js';
import { within } from '../helpers/within.js';

// Issue 12, item 6: a revoked key's open chat stream and long-poll end within a second; a shutdown
// ends open streams at the end of its grace period (G83).
const GENEROUS_MS = 10_000;
let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** A harness whose sandbox chat takes ~30 s for a reply (2 tokens/s), listening on a port. */
async function slowChat(): Promise<{ h: Harness; url: string }> {
  const harness = await createHarness({ workers: false, chatProviders: [createSandboxChatProvider({ tokensPerSecond: 2 })] });
  h = harness;
  return { h: harness, url: await harness.app.listen({ port: 0, host: '127.0.0.1' }) };
}

function openStream(url: string, key: string): Promise<Response> {
  return fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'chat-2.5-flash', stream: true, messages: [{ role: 'user', content: 'Tell me a long story about a fox' }] }),
  });
}

/** Reads the stream to its end; its events and whether the first content arrived before `onFirst` ran. */
async function readAll(res: Response, onFirstContent: () => unknown): Promise<string[]> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let told = false;
  for (let r = await reader.read(); !r.done; r = await reader.read()) {
    text += decoder.decode(r.value, { stream: true });
    if (!told && /"content":"[^"]/.test(text)) {
      told = true;
      await onFirstContent();
    }
  }
  return text
    .split('\n\n')
    .filter((e) => e.startsWith('data: '))
    .map((e) => e.slice(6));
}

describe('open requests of a revoked key', () => {
  it('a chat stream ends with an invalid_api_key error event, long before its reply would have', async () => {
    const { h, url } = await slowChat();
    const { secret, record } = await createApiKey(h.store.keys, 'to-revoke');
    const res = await openStream(url, secret);
    expect(res.status).toBe(200);
    const events = await within(
      readAll(res, () => h.store.keys.revoke(record.id, Date.now())),
      GENEROUS_MS,
      'the stream to end after the revocation',
    );
    const last = JSON.parse(events.at(-1)!) as { error?: { code: string } };
    expect(last.error).toMatchObject({ code: 'invalid_api_key' });
    expect(events).not.toContain('[DONE]');
    // what was sent is billed
    expect((await h.store.usage.chatUsageByKey(record.id))[0]?.completionTokens).toBeGreaterThan(0);
  });

  it('a long-poll answers 401 soon after the revocation', async () => {
    const { h, url } = await slowChat();
    const { secret, record } = await createApiKey(h.store.keys, 'poller');
    const created = (await (
      await fetch(`${url}/v1/pic/images`, {
        method: 'POST',
        headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'pic', prompt: 'x' }),
      })
    ).json()) as { id: string };
    const waiting = fetch(`${url}/v1/result/${created.id}?wait=60`, { headers: { authorization: `Bearer ${secret}` } });
    // revoked while the long-poll waits (not before it arrived, which would be a plain 401)
    await waitFor(() => (h.gateway.watch.size === 1 ? true : undefined), GENEROUS_MS, 'the long-poll to wait');
    await h.store.keys.revoke(record.id, Date.now());
    const res = await within(waiting, GENEROUS_MS, 'the long-poll to answer after the revocation');
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('invalid_api_key');
  });
});

describe('shutdown', () => {
  it('ends an open chat stream with a service_unavailable error event after the grace period, and closes', async () => {
    const { h: harness, url } = await slowChat();
    const res = await openStream(url, harness.key);
    let streaming!: () => void;
    const started = new Promise<void>((resolve) => {
      streaming = resolve;
    });
    const reading = readAll(res, streaming);
    await within(started, GENEROUS_MS, 'the first content of the stream'); // the stream is open and under way
    await within(harness.close(), GENEROUS_MS, 'the gateway to close with a stream open');
    h = undefined;
    const events = await reading;
    expect(JSON.parse(events.at(-1)!)).toMatchObject({ error: { code: 'service_unavailable' } });
    expect(events).not.toContain('[DONE]');
  });
});
