/**
 * The one window of G86 against an upstream mediagate: a worker that dies after the upstream
 * accepted a create and before the reference was saved. The task is started again with the same
 * Idempotency-Key and the same body (a relayed upload's signed URL included, G95), so the upstream
 * answers the same generation; a new generation after a failure is a new create.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/logger.js';
import { mediaUrlOf } from '../../../src/main/gateway.js';
import { AppError } from '../../../src/errors.js';
import { ChannelError, type ProviderContext, type ProviderJob } from '../../../src/providers/types.js';
import type { TaskRecord } from '../../../src/store/types.js';
import { jobOf } from '../../../src/tasks/task-work.js';
import { image } from '../../helpers/media-fixtures.js';
import { startRelayPair, type RelayPair } from '../../helpers/relay-pair.js';

let p: RelayPair;
// no workers at the relaying gateway: the test plays its worker; the upstream runs its tasks
beforeAll(async () => {
  p = await startRelayPair({ relaying: { workers: false } });
}, 60_000);
afterAll(async () => {
  await p?.close();
});

const PERIOD = 6 * 3600_000;

function contextAt(task: TaskRecord, now: number): ProviderContext {
  return {
    signal: new AbortController().signal,
    log: createLogger('silent'),
    workDir: '',
    reportProgress: () => undefined,
    readMedia: async () => {
      throw new Error('not used');
    },
    mediaUrl: (ref) => mediaUrlOf(p.relaying.signer, task.id, ref, now),
  };
}

async function queuedPicWithUpload(): Promise<TaskRecord> {
  const form = new FormData();
  form.append('file', new Blob([await image(400, 400)], { type: 'image/png' }), 'a.png');
  const asset = (await (
    await fetch(`${p.relaying.origin}/v2/model-center/assets`, { method: 'POST', headers: { authorization: `Bearer ${p.relaying.key}` }, body: form })
  ).json()) as { id: string };
  const res = await fetch(`${p.relaying.origin}/v1/pic/images`, {
    method: 'POST',
    headers: { authorization: `Bearer ${p.relaying.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'pic', prompt: 'crash window', image_urls: [`assetId://${asset.id}`] }),
  });
  expect(res.status).toBe(200);
  return (await p.relaying.store.tasks.get(((await res.json()) as { id: string }).id))!;
}

describe('a create repeated after a crash', () => {
  it('is the same generation at the upstream: same key, same body, its first answer replayed', async () => {
    const task = await queuedPicWithUpload();
    const job: ProviderJob = jobOf(task, 'relay');
    // two starts of generation 0 an hour apart within one period of the signed URLs
    const t1 = Math.floor(Date.now() / PERIOD) * PERIOD + 60_000;
    const first = await p.relay.start!(job, contextAt(task, t1));
    const again = await p.relay.start!(job, contextAt(task, t1 + 3600_000));
    expect(first.state).toBe('started');
    expect(again).toEqual(first);
    const creates = p.createsWithKey(task.id);
    expect(creates).toHaveLength(2);
    expect(creates[1]!.body).toBe(creates[0]!.body);
    expect(creates[1]!.targetHeaders?.['idempotent-replayed']).toBe('true');
  });

  it('a new generation is a new create under <task id>.<n>', async () => {
    const task = await queuedPicWithUpload();
    const job = jobOf(task, 'relay');
    const now = Date.now();
    const first = await p.relay.start!(job, contextAt(task, now));
    const second = await p.relay.start!({ ...job, generation: 1 }, contextAt(task, now));
    expect(p.createsWithKey(`${task.id}.1`)).toHaveLength(1);
    expect(first.state === 'started' && second.state === 'started' && first.ref.id !== second.ref.id).toBe(true);
  });

  it('another body under the same key (a URL signed for another period) is a retryable conflict, not a second generation', async () => {
    const task = await queuedPicWithUpload();
    const job = jobOf(task, 'relay');
    await p.relay.start!(job, contextAt(task, Date.now()));
    const err = await p.relay.start!(job, contextAt(task, Date.now() + PERIOD)).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(AppError);
    expect(err).not.toBeInstanceOf(ChannelError);
    expect((err as AppError).retryable).toBe(true);
    expect((err as Error).message).toMatch(/idempotency_key_reused/);
  });
});
