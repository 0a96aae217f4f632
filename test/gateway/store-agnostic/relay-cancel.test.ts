/**
 * Motion cancel through the relay (G93, G94): the relaying task is cancelled at once
 * and the cancel reaches the upstream, whose task ends cancelled.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../helpers/wait-for.js';
import { callRelaying, startRelayPair, type RelayPair } from '../../helpers/relay-pair.js';

describe('motion cancel through the relay', () => {
  let p: RelayPair;
  // an upstream without workers: its task waits queued until it is cancelled
  beforeAll(async () => {
    p = await startRelayPair({ upstream: { workers: false } });
  }, 60_000);
  afterAll(async () => {
    await p?.close();
  });

  it('the relaying task is cancelled at once; the cancel reaches the upstream, whose task ends cancelled', async () => {
    const created = await callRelaying(p, 'POST', '/v1/motion/videos', { model: 'motion_2_0_4s_5s', content: [{ type: 'text', text: 'stop me' }] });
    expect(created.status).toBe(200);
    const id = created.json.id as string;
    const started = await waitFor(async () => (await p.relaying.store.tasks.get(id))?.upstream?.ref, 10_000, 'the generation started upstream');
    expect((await p.upstream.store.tasks.get(started.id))!.status).toBe('queued');
    const cancelled = await callRelaying(p, 'POST', `/v1/motion/videos/${id}/cancel`);
    expect(cancelled.status).toBe(200);
    expect(cancelled.json).toMatchObject({ id, status: 'cancelled' });
    await waitFor(
      async () => ((await p.upstream.store.tasks.get(started.id))!.status === 'cancelled' ? true : undefined),
      10_000,
      'the upstream task cancelled',
    );
    const sent = p.proxy.requests.filter((r) => r.method === 'POST' && r.url === `/power/v1/motion/videos/${started.id}/cancel`);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.headers.authorization).toBe(`Bearer ${p.upstream.key}`);
    expect((await p.relaying.store.tasks.get(id))!.status).toBe('cancelled');
  });
});
