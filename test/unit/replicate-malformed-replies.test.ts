/**
 * The Replicate adapter fed replies of the wrong shape (G272, G453): a create answered 2xx with any
 * of them sends one create and is started or an unreadable create (never the channel's fault, never
 * a TypeError); a check is answered or a reply problem checked a bounded number of times.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planPicTask } from '../../src/contract/pic.js';
import { createReplicateProvider } from '../../src/providers/replicate/index.js';
import type { MediaProvider } from '../../src/providers/types.js';
import { REPLICATE_MODELS } from '../helpers/replicate-models.js';
import { classifyCheck, classifyStart, malformedVariants, said, startScriptedUpstream, type ScriptedUpstream } from '../helpers/malformed-replies.js';
import { asBody, jobOfPlan, providerContext } from '../helpers/provider-jobs.js';

let upstream: ScriptedUpstream;
let provider: MediaProvider;
let next = '';

beforeAll(async () => {
  upstream = await startScriptedUpstream((r) => ({ status: r.method === 'POST' ? 201 : 200, body: next }));
  provider = createReplicateProvider({ id: 'rep', baseUrl: upstream.origin, apiKey: 'r8_key', models: REPLICATE_MODELS as never, timeoutMs: 10_000 });
});
afterAll(async () => {
  await provider?.close?.();
  await upstream?.close();
});

const job = () => jobOfPlan(planPicTask(asBody({ model: 'pic-2', prompt: 'a fox' })), 'flux-schnell');
const prediction = (status: string, extra: Record<string, unknown> = {}) => ({
  id: 'p1',
  status,
  input: { prompt: 'a fox' },
  output: null,
  error: null,
  logs: '',
  urls: { get: `${upstream.origin}/predictions/p1`, cancel: `${upstream.origin}/predictions/p1/cancel` },
  ...extra,
});

describe('replicate: creates answered 201 with the wrong shape', () => {
  it('each sends one create and is started or an unreadable create', async () => {
    const wrong: string[] = [];
    for (const [name, body] of malformedVariants(prediction('starting'))) {
      next = body;
      const before = upstream.count('POST', '/models/');
      const r = await classifyStart(() => provider.start!(job(), providerContext()));
      expect(upstream.count('POST', '/models/') - before, name).toBe(1);
      if (!['started', 'unreadable create'].includes(r.class)) wrong.push(`${name}: ${said(r)}`);
    }
    expect(wrong).toEqual([]);
  });
});

describe('replicate: checks answered 200 with the wrong shape', () => {
  it('each is answered or a reply problem checked a bounded number of times', async () => {
    const wrong: string[] = [];
    const all = [
      ...malformedVariants(prediction('processing', { logs: ' 45%|████▌ | 9/20' })),
      ...malformedVariants(prediction('succeeded', { output: ['https://replicate.delivery/a.png'] })),
      ...malformedVariants(prediction('failed', { error: 'NSFW content detected' })),
    ];
    for (const [name, body] of all) {
      next = body;
      const r = await classifyCheck(() => provider.check!({ id: 'p1' }, job(), providerContext()));
      if (r.class === 'checked again (unbounded)') wrong.push(`${name}: ${said(r)}`);
    }
    expect(wrong).toEqual([]);
  });
});
