import { afterAll, beforeAll, expect, it } from 'vitest';
import { scriptedProvider } from '../../helpers/chat.js';
import { createHarness, type Harness } from '../../helpers/harness.js';

// Chat media URLs go to the model provider unfetched; a provider inside the operator's network
// would fetch them from there, so the caller-URL address rule applies (G79).
const upstream = scriptedProvider('upstream', [{ delta: 'ok' }]);
let h: Harness;
beforeAll(async () => {
  h = await createHarness({ workers: false, env: { MEDIAGATE_ALLOW_PRIVATE_URLS: '0' }, chatProviders: [upstream], chatRoutes: { '*': 'upstream' } });
});
afterAll(async () => {
  await h.close();
});

const ask = (url: string, stream = false) =>
  h.app.inject({
    method: 'POST',
    url: '/v1/chat/completions',
    headers: h.auth(),
    payload: {
      model: 'chat-3.1-pro-preview',
      stream,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'what is this?' },
            { type: 'image_url', image_url: { url } },
          ],
        },
      ],
    },
  });

it.each([
  'http://127.0.0.1/secret.png',
  'http://[::1]/x.png',
  'http://10.0.0.8/admin',
  'http://169.254.169.254/latest/meta-data/',
  'http://2130706433/x.png',
  'http://localhost:8080/x.png',
])('%s is refused before the provider is called, streamed or not', async (url) => {
  for (const stream of [false, true]) {
    const res = await ask(url, stream);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: '400', data: null, success: false });
    expect(res.json().msg).toMatch(/^messages\[0\]\.content\[1\]\.image_url\.url: .*only public addresses are allowed/);
  }
  expect(upstream.requests).toHaveLength(0);
});

it('a name that does not resolve is a 400 naming the field', async () => {
  const res = await ask('http://no-such-host.invalid/a.png');
  expect(res.statusCode).toBe(400);
  expect(res.json().msg).toMatch(/^messages\[0\]\.content\[1\]\.image_url\.url: .*does not resolve/);
});

it('a public URL goes through to the provider as it is', async () => {
  const res = await ask('https://93.184.215.14/cat.png');
  expect(res.statusCode).toBe(200);
  expect(upstream.requests.at(-1)?.messages[0]?.content).toEqual([
    { type: 'text', text: 'what is this?' },
    { type: 'image_url', image_url: { url: 'https://93.184.215.14/cat.png' } },
  ]);
});
