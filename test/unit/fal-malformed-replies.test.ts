/**
 * The fal adapter fed replies of the wrong shape (G272, G453): a submit answered 200 with any of
 * them sends one create and is started or an unreadable create (never the channel's fault, never a
 * TypeError); a check whose status or result answer is of the wrong shape is answered or a reply
 * problem checked a bounded number of times, never an error looked at until the attempt time limit.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planPicTask } from '../../src/contract/pic.js';
import { createFalProvider } from '../../src/providers/fal/index.js';
import type { MediaProvider } from '../../src/providers/types.js';
import { FAL_MODELS } from '../helpers/fal-mapping.js';
import { classifyCheck, classifyStart, malformedVariants, said, startScriptedUpstream, type ScriptedUpstream } from '../helpers/malformed-replies.js';
import { asBody, jobOfPlan, providerContext } from '../helpers/provider-jobs.js';

let upstream: ScriptedUpstream;
let provider: MediaProvider;
const next = { submit: '', status: '', result: '' };

beforeAll(async () => {
  upstream = await startScriptedUpstream((r) => ({
    body: r.method === 'POST' ? next.submit : r.path.endsWith('/status') ? next.status : next.result,
  }));
  provider = createFalProvider({ id: 'falq', baseUrl: upstream.origin, apiKey: 'k:s', models: FAL_MODELS, timeoutMs: 10_000 });
});
afterAll(async () => {
  await provider?.close?.();
  await upstream?.close();
});

const job = () => jobOfPlan(planPicTask(asBody({ model: 'pic', prompt: 'a fox' })), 'fal-ai/flux/dev');
const urls = () => {
  const at = `${upstream.origin}/fal-ai/flux/requests/r1`;
  return { status_url: `${at}/status`, response_url: at, cancel_url: `${at}/cancel` };
};
const ref = () => {
  const u = urls();
  return { id: 'r1', data: { statusUrl: u.status_url, responseUrl: u.response_url, cancelUrl: u.cancel_url, fieldOfInput: {} } };
};
const validResult = () => ({ images: [{ url: 'https://v3.fal.media/files/a.png', content_type: 'image/png' }], has_nsfw_concepts: [false], seed: 1 });

describe('fal: submits answered 200 with the wrong shape', () => {
  it('each sends one create and is started or an unreadable create', async () => {
    const wrong: string[] = [];
    for (const [name, body] of malformedVariants({ request_id: 'r1', ...urls(), queue_position: 0 })) {
      next.submit = body;
      const before = upstream.count('POST', '/');
      const r = await classifyStart(() => provider.start!(job(), providerContext()));
      expect(upstream.count('POST', '/') - before, name).toBe(1);
      if (!['started', 'unreadable create'].includes(r.class)) wrong.push(`${name}: ${said(r)}`);
    }
    expect(wrong).toEqual([]);
  });
});

describe('fal: checks answered 200 with the wrong shape', () => {
  it('a status of the wrong shape is answered or a reply problem', async () => {
    const wrong: string[] = [];
    next.result = JSON.stringify(validResult());
    for (const [name, body] of [...malformedVariants({ status: 'IN_QUEUE', queue_position: 3 }), ...malformedVariants({ status: 'COMPLETED' })]) {
      next.status = body;
      const r = await classifyCheck(() => provider.check!(ref(), job(), providerContext()));
      if (r.class === 'checked again (unbounded)') wrong.push(`${name}: ${said(r)}`);
    }
    expect(wrong).toEqual([]);
  });

  it('a result of the wrong shape is answered or a reply problem', async () => {
    const wrong: string[] = [];
    next.status = JSON.stringify({ status: 'COMPLETED' });
    for (const [name, body] of malformedVariants(validResult())) {
      next.result = body;
      const r = await classifyCheck(() => provider.check!(ref(), job(), providerContext()));
      if (r.class === 'checked again (unbounded)') wrong.push(`${name}: ${said(r)}`);
    }
    expect(wrong).toEqual([]);
  });
});
