/**
 * A generation whose saved reference its provider can no longer follow fails its task at once
 * (G464): a fal request saved while the queue address was another (providers.json changed since)
 * makes fal's check throw "cannot follow"; the engine took that as a check that could not be made
 * and looked again until the attempt time limit (30 min), then made a new generation. The fal
 * provider is the real one; only the reference its start saved is moved to another address, as
 * an older configuration would have saved it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFalProvider } from '../../../src/providers/fal/index.js';
import type { MediaProvider, StartResult } from '../../../src/providers/types.js';
import { FAL_MODELS } from '../../helpers/fal-mapping.js';
import { createHarness, type Harness } from '../../helpers/harness.js';
import { body } from '../../helpers/json.js';
import { startScriptedUpstream, type ScriptedUpstream } from '../../helpers/malformed-replies.js';

const OLD_QUEUE = 'https://queue.old-address.example';
let upstream: ScriptedUpstream;
let h: Harness;

beforeAll(async () => {
  upstream = await startScriptedUpstream((r) => {
    if (r.method !== 'POST') return { body: JSON.stringify({ status: 'IN_PROGRESS' }) };
    const at = `${upstream.origin}/fal-ai/flux/requests/r1`;
    return { body: JSON.stringify({ request_id: 'r1', status_url: `${at}/status`, response_url: at, cancel_url: `${at}/cancel` }) };
  });
  const fal = createFalProvider({ id: 'falq', baseUrl: upstream.origin, apiKey: 'k:s', models: FAL_MODELS, pollSeconds: 0.05 });
  // the reference as a gateway configured with another queue address saved it
  const moved: MediaProvider = {
    ...fal,
    start: async (job, ctx): Promise<StartResult> => {
      const r = await fal.start(job, ctx);
      if (r.state !== 'started') return r;
      const data = Object.fromEntries(Object.entries(r.ref.data ?? {}).map(([k, v]) => [k, typeof v === 'string' ? v.replace(upstream.origin, OLD_QUEUE) : v]));
      return { ...r, ref: { ...r.ref, data } };
    },
  };
  h = await createHarness({
    backoffScale: 0.01,
    providers: [moved],
    routes: { pic: [{ provider: 'falq', model: 'fal-ai/flux/dev', priority: 0, weight: 1 }] },
  });
}, 60_000);
afterAll(async () => {
  await h?.close();
  await upstream?.close();
});

describe('a check that can never be made (G464)', () => {
  it('fails the task at its first check, once created, without asking the upstream again', async () => {
    const res = await h.app.inject({ method: 'POST', url: '/v1/pic/images', headers: h.auth(), payload: { model: 'pic', prompt: 'a fox' } });
    expect(res.statusCode, res.body).toBe(200);
    const task = await h.waitForTask(body(res).id as string);
    expect(task.status).toBe('failed');
    expect(task.error).toMatch(/cannot follow request r1: its saved URLs are not at the configured queue address/);
    expect(upstream.count('POST', '/')).toBe(1);
    // neither the status nor the cancel went anywhere: the saved URLs are not the configured address's
    expect(upstream.requests.filter((r) => r.method !== 'POST')).toEqual([]);
  });
});
