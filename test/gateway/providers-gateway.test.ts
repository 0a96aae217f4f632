/**
 * A gateway configured only by providers.json (MEDIAGATE_PROVIDERS, README "Upstream providers"):
 * its media models go to a relay (an upstream mediagate), renamed where the route says; its chat
 * models to an OpenAI-compatible server (`openai-chat`) under the routed name; models without a
 * route to the built-in sandbox; keys come from the named variables.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../helpers/harness.js';
import { configFiles } from '../helpers/config-files.js';
import { reply, startFakeOpenAi, type FakeOpenAi } from '../helpers/fake-openai.js';
import { listeningGateway, type ListeningGateway } from '../helpers/listening-gateway.js';

const { file } = configFiles('mediagate-providers-gw-');
let upstream: ListeningGateway;
let openai: FakeOpenAi;
let gw: Harness;

beforeAll(async () => {
  upstream = await listeningGateway();
  openai = await startFakeOpenAi(reply({ content: 'from the chat server' }));
  const providers = file({
    providers: {
      up: { type: 'relay', baseUrl: upstream.origin, apiKeyEnv: 'UP_KEY', pollSeconds: 0.05 },
      chat: { type: 'openai-chat', baseUrl: openai.baseUrl, apiKeyEnv: 'CHAT_KEY' },
    },
    routes: {
      pic: [{ provider: 'up' }],
      'pic-2': [{ provider: 'up', model: 'pic-pro' }],
      'chat-2.5-flash': [{ provider: 'chat', model: 'gpt-4o-mini' }],
    },
  });
  // no providers handed in: the gateway builds them from the file, as `mediagate serve` does
  gw = await createHarness({ env: { MEDIAGATE_PROVIDERS: providers, UP_KEY: upstream.key, CHAT_KEY: 'sk-chat-key-0123456789' } });
}, 60_000);

afterAll(async () => {
  await gw?.close();
  await upstream?.close();
  await openai?.close();
});

const submitPic = async (model: string) => {
  const res = await gw.app.inject({ method: 'POST', url: '/v1/pic/images', headers: gw.auth(), payload: { model, prompt: 'a lighthouse' } });
  expect(res.statusCode).toBe(200);
  return res.json().id as string;
};

describe('a gateway built from providers.json', () => {
  it("a routed media model runs at the relay's upstream, under the routed name where one is given", async () => {
    const id = await submitPic('pic');
    const renamed = await submitPic('pic-2');
    for (const t of [id, renamed]) expect((await gw.waitForTask(t)).status).toBe('completed');
    const task = (await gw.store.tasks.get(id))!;
    const upstreamTask = (await upstream.store.tasks.get(task.upstream!.ref!.id))!;
    expect(upstreamTask).toMatchObject({ model: 'pic', status: 'completed' });
    const renamedTask = (await upstream.store.tasks.get((await gw.store.tasks.get(renamed))!.upstream!.ref!.id))!;
    expect(renamedTask.model).toBe('pic-pro');
  });

  it('a model without a route stays on the built-in sandbox', async () => {
    const id = await submitPic('pic-pro-stable');
    const done = await gw.waitForTask(id);
    expect(done).toMatchObject({ status: 'completed', provider: 'sandbox' });
    expect(done.upstream?.ref).toBeUndefined();
  });

  it('a routed chat model goes to the openai-chat provider with its key and the routed model name', async () => {
    const res = await gw.app.inject({
      method: 'POST',
      url: '/v1/chat/completions',
      headers: gw.auth(),
      payload: { model: 'chat-2.5-flash', messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.content).toBe('from the chat server');
    const sent = openai.requests.at(-1)!;
    expect(sent.body).toMatchObject({ model: 'gpt-4o-mini' });
    expect(sent.headers.authorization).toBe('Bearer sk-chat-key-0123456789');
    // an unrouted chat model: the sandbox answers, the chat server is not called
    const before = openai.requests.length;
    const sandbox = await gw.app.inject({
      method: 'POST',
      url: '/v1/chat/completions',
      headers: gw.auth(),
      payload: { model: 'chat-2.5-pro', messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(sandbox.statusCode).toBe(200);
    expect(openai.requests.length).toBe(before);
  });
});
