/**
 * A create repeated after a crash whose body is no longer the first one's (a relayed upload's URL
 * signed in another period, or under a changed MEDIAGATE_PUBLIC_URL, G95): the upstream answers
 * 409 `idempotency_key_reused` to every repeat under that key, for as long as it keeps the key (24 h
 * at a mediagate). Repeating the create under the same key can never succeed, so the task goes on
 * with a new generation (`<task id>.1`) instead of failing once its attempts are used up (G126).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mediaUrlOf } from '../../../src/main/gateway.js';
import { createRelayProvider } from '../../../src/providers/relay/index.js';
import type { Provider, StartResult } from '../../../src/providers/types.js';
import { image } from '../../helpers/media-fixtures.js';
import { listeningGateway, type ListeningGateway } from '../../helpers/listening-gateway.js';
import { RELAYING_BACKOFF_SCALE } from '../../helpers/relay-pair.js';

const PERIOD = 6 * 3600_000;
let upstream: ListeningGateway;
let relaying: ListeningGateway;
/** What the worker that "died" got from the upstream: the generation made under the plain key. */
let firstCreate: StartResult | undefined;

beforeAll(async () => {
  upstream = await listeningGateway();
  const relay = createRelayProvider({ id: 'relay', baseUrl: upstream.origin, apiKey: upstream.key, pollSeconds: 0.05 });
  // The first start plays a worker that dies after the upstream took its create: that create's
  // upload URL was signed in the next period (the crash crossed a period boundary), and the
  // attempt ends without a saved reference. Later starts are the relay's own.
  const crashing: Provider = {
    ...relay,
    async start(job, ctx) {
      if (firstCreate !== undefined) return relay.start!(job, ctx);
      firstCreate = await relay.start!(job, { ...ctx, mediaUrl: (ref) => mediaUrlOf(relaying.signer, job.taskId, ref, Date.now() + PERIOD) });
      throw new Error('the worker died after the upstream took the create');
    },
  };
  relaying = await listeningGateway({
    providers: [crashing],
    routes: { '*': [{ provider: 'relay', priority: 0, weight: 1 }] },
    backoffScale: RELAYING_BACKOFF_SCALE,
  });
}, 60_000);

afterAll(async () => {
  await relaying?.close();
  await upstream?.close();
});

describe('a repeated create the upstream refuses as another request under its key', () => {
  it('goes on as a new generation under <task id>.1 and completes', async () => {
    const form = new FormData();
    form.append('file', new Blob([await image(400, 400)], { type: 'image/png' }), 'a.png');
    const asset = (await (await fetch(`${relaying.origin}/v2/model-center/assets`, { method: 'POST', headers: relaying.auth(), body: form })).json()) as {
      id: string;
    };
    const res = await relaying.app.inject({
      method: 'POST',
      url: '/v1/pic/images',
      headers: relaying.auth(),
      payload: { model: 'pic', prompt: 'a crash across a period boundary', image_urls: [`assetId://${asset.id}`] },
    });
    expect(res.statusCode).toBe(200);
    const done = await relaying.waitForTask(res.json().id as string, undefined, 30_000);
    expect(done.error).toBeNull();
    expect(done.status).toBe('completed');
    // the first generation was made under the plain key and is not the one checked
    expect(firstCreate?.state).toBe('started');
    const lost = firstCreate?.state === 'started' ? firstCreate.ref.id : '';
    expect(await upstream.store.tasks.get(lost)).toBeDefined();
    expect(done.upstream).toMatchObject({ generation: 1 });
    expect(done.upstream?.ref?.id).not.toBe(lost);
    expect((await upstream.store.tasks.get(done.upstream!.ref!.id))?.status).toBe('completed');
    // one attempt for the crash, one for the refused repeat: the new generation ran on the last
    expect(done.attempts).toBe(3);
  });
});
