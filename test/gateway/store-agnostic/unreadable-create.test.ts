/**
 * A create the upstream answered 200 with a reply the gateway cannot read, at an upstream where a
 * repeated create is a second (billed) generation: the task fails after that one create, saying
 * why; it is never created again, on that channel or the next (G453). Gemini
 * (a Veo operation without a name, an image answer of the wrong shape) and OpenAI images (not
 * JSON) behind scripted upstreams that count their creates; each route has a second candidate at
 * the same upstream, which must not be asked either.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGeminiProvider } from '../../../src/providers/gemini/index.js';
import { createOpenAiImagesProvider } from '../../../src/providers/openai-images/index.js';
import { createHarness, type Harness } from '../../helpers/harness.js';
import { body } from '../../helpers/json.js';
import { startScriptedUpstream, type Reply, type ScriptedUpstream } from '../../helpers/malformed-replies.js';

let gemini: ScriptedUpstream;
let openai: ScriptedUpstream;
let h: Harness;
/** What each upstream answers a create with, by the prompt it carries. */
const answers = new Map<string, Reply>();
const answerOf = (raw: string): Reply | undefined => [...answers].find(([prompt]) => raw.includes(prompt))?.[1];

beforeAll(async () => {
  gemini = await startScriptedUpstream((r) => (r.method === 'POST' ? answerOf(r.body) : undefined));
  openai = await startScriptedUpstream((r) => (r.method === 'POST' ? answerOf(r.body) : undefined));
  const gem = (id: string) => createGeminiProvider({ id, baseUrl: `${gemini.origin}/v1beta`, apiKey: 'AIza-k', pollSeconds: 0.05 });
  const oai = (id: string) => createOpenAiImagesProvider({ id, baseUrl: `${openai.origin}/v1`, apiKey: 'sk-k' });
  h = await createHarness({
    backoffScale: 0.01,
    providers: [gem('gem'), gem('gem2'), oai('oai'), oai('oai2')],
    routes: {
      clip_3_1_fast: [
        { provider: 'gem', model: 'veo-3.1-fast-generate-preview', priority: 0, weight: 1 },
        { provider: 'gem2', model: 'veo-3.1-fast-generate-preview', priority: 1, weight: 1 },
      ],
      'pic-2': [
        { provider: 'gem', model: 'gemini-3-pro-image-preview', priority: 0, weight: 1 },
        { provider: 'gem2', model: 'gemini-3-pro-image-preview', priority: 1, weight: 1 },
      ],
      pic: [
        { provider: 'oai', model: 'gpt-image-1', priority: 0, weight: 1 },
        { provider: 'oai2', model: 'gpt-image-1', priority: 1, weight: 1 },
      ],
    },
  });
}, 60_000);
afterAll(async () => {
  await h?.close();
  await gemini?.close();
  await openai?.close();
});

async function run(path: string, payload: Record<string, unknown>, upstream: ScriptedUpstream, reply: Reply) {
  const prompt = `prompt-${Math.random().toString(36).slice(2)}`;
  answers.set(prompt, reply);
  const res = await h.app.inject({ method: 'POST', url: path, headers: h.auth(), payload: { ...payload, prompt } });
  expect(res.statusCode, res.body).toBe(200);
  const task = await h.waitForTask(body(res).id as string);
  const creates = upstream.requests.filter((r) => r.method === 'POST' && r.body.includes(prompt)).length;
  return { task, creates };
}

describe('a create answered 200 with an unreadable reply, at an upstream without idempotent creates (G453)', () => {
  it.each([
    ['a Veo operation without a name', '/clip/videos', { model: 'clip_3_1_fast' }, { body: '{}' }, /no operation name/],
    ['a Veo answer that is not JSON', '/clip/videos', { model: 'clip_3_1_fast' }, { body: '<html>ok</html>' }, /not JSON/],
    ['an image answer whose parts are not a list', '/v1/pic/images', { model: 'pic-2' }, { body: '{"candidates":[{"content":{"parts":{}}}]}' }, /not a list/],
  ])('gemini, %s: one create, the task fails saying so', async (_name, path, payload, reply, why) => {
    const { task, creates } = await run(path, payload, gemini, reply);
    expect(creates).toBe(1);
    expect(task.status).toBe('failed');
    expect(task.error).toMatch(why);
    expect(task.error).toMatch(/not created again/);
  });

  it('openai-images, an answer that is not JSON: one create, the task fails saying so', async () => {
    const { task, creates } = await run('/v1/pic/images', { model: 'pic' }, openai, { body: 'not json' });
    expect(creates).toBe(1);
    expect(task.status).toBe('failed');
    expect(task.error).toMatch(/not JSON.*not created again/);
  });
});
