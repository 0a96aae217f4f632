import { afterAll, beforeAll, expect, it } from 'vitest';
import { createSandboxChatProvider } from '../src/chat/sandbox.js';
import { createHarness, type Harness } from './helpers/harness.js';

// A provider that has accepted the request ('open') opens the caller's stream at once: status line
// and role chunk before the first token, so a client is ready when the token comes.
let h: Harness;
let url: string;
beforeAll(async () => {
  h = await createHarness({ workers: false, chatProviders: [createSandboxChatProvider({ tokensPerSecond: 4 })] });
  url = await h.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => { await h.close(); });

it('the role chunk arrives before the first token, the token when it is generated', async () => {
  const t0 = Date.now();
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST', headers: { ...h.auth(), 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'chat-2.5-flash', messages: [{ role: 'user', content: 'hi' }], stream: true, max_completion_tokens: 2 }),
  });
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  const first = new TextDecoder().decode((await reader.read()).value);
  const firstAt = Date.now() - t0;
  expect(first).toContain('"role":"assistant"');
  expect(first).not.toMatch(/"content":"[^"]/); // no token yet
  expect(firstAt).toBeLessThan(200); // the first token is due at 250 ms (4 tokens/s)
  let rest = '';
  for (let r = await reader.read(); !r.done; r = await reader.read()) rest += new TextDecoder().decode(r.value);
  expect(Date.now() - t0).toBeGreaterThanOrEqual(240);
  expect(rest).toMatch(/"content":"[^"]+"/);
  expect(rest.trimEnd().endsWith('data: [DONE]')).toBe(true);
});
