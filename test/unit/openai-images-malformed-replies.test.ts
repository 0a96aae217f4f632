/**
 * The openai-images adapter fed replies of the wrong shape (G272, G453): a generation answered 200
 * with any of them is one create that ends made or as an unreadable create (which the engine does
 * not repeat: the image was made and billed), never the channel's fault, never a TypeError.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planPicTask } from '../../src/contract/pic.js';
import { createOpenAiImagesProvider } from '../../src/providers/openai-images/index.js';
import type { MediaProvider } from '../../src/providers/types.js';
import { image } from '../helpers/media-fixtures.js';
import { classifyStart, malformedVariants, said, startScriptedUpstream, type ScriptedUpstream } from '../helpers/malformed-replies.js';
import { asBody, jobOfPlan, providerContext } from '../helpers/provider-jobs.js';

let upstream: ScriptedUpstream;
let provider: MediaProvider;
let next = '';

beforeAll(async () => {
  upstream = await startScriptedUpstream(() => ({ body: next }));
  provider = createOpenAiImagesProvider({ id: 'oai', baseUrl: `${upstream.origin}/v1`, apiKey: 'sk-k', timeoutMs: 10_000 });
});
afterAll(async () => {
  await provider?.close?.();
  await upstream?.close();
});

describe('openai-images: generations answered 200 with the wrong shape', () => {
  it('each sends one create and is made or an unreadable create', async () => {
    const png = (await image(8, 8, 'png')).toString('base64');
    const job = () => jobOfPlan(planPicTask(asBody({ model: 'pic', prompt: 'a fox' })), 'gpt-image-1');
    const wrong: string[] = [];
    for (const [name, body] of malformedVariants({ created: 1, data: [{ b64_json: png }], output_format: 'png', size: '1024x1024' })) {
      next = body;
      const before = upstream.count('POST', '/v1/images/');
      const r = await classifyStart(() => provider.start!(job(), providerContext()));
      expect(upstream.count('POST', '/v1/images/') - before, name).toBe(1);
      if (!['done', 'unreadable create'].includes(r.class)) wrong.push(`${name}: ${said(r)}`);
    }
    expect(wrong).toEqual([]);
  });
});
