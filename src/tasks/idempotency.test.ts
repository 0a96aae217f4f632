import { describe, expect, it } from 'vitest';
import { mediaRefs } from '../contract/media-refs.js';
import { openSqliteStore } from '../store/sqlite/open.js';
import { idempotencyTaskKey } from '../store/types.js';
import { canonicalJson, IdempotencyService, STALE_CLAIM_MS } from './idempotency.js';
import { insertTask } from '../../test/helpers/task-rows.js';

// The Idempotency-Key rules without HTTP (G70-G73).
function setup() {
  const store = openSqliteStore(':memory:');
  return { store, service: new IdempotencyService(store.idempotency, store.tasks) };
}

describe('IdempotencyService', () => {
  it('claims a new key, replays a stored success for the same request, refuses another request under it', async () => {
    const { service } = setup();
    const first = await service.start('key_1', 'k', '/v1/pic/images', { model: 'pic', prompt: 'x' }, 1000);
    expect(first).toEqual({ run: true, claim: { keyId: 'key_1', idemKey: 'k', claimedAt: 1000 } });
    if (!first.run) throw new Error('unreachable');
    await service.finish(first.claim, 200, '{"id":"task_1"}');
    expect(await service.start('key_1', 'k', '/v1/pic/images', { model: 'pic', prompt: 'x' }, 2000)).toEqual({
      run: false,
      statusCode: 200,
      payload: '{"id":"task_1"}',
    });
    await expect(service.start('key_1', 'k', '/v1/pic/images', { model: 'pic', prompt: 'y' }, 2000)).rejects.toThrow(
      expect.objectContaining({ code: 'idempotency_key_reused', status: 409 }),
    );
    await expect(service.start('key_1', 'k', '/v2/model-center/tasks', { model: 'pic', prompt: 'x' }, 2000)).rejects.toThrow(
      expect.objectContaining({ code: 'idempotency_key_reused' }),
    );
    // another API key's use of the same string is unrelated
    expect((await service.start('key_2', 'k', '/v1/pic/images', { model: 'pic', prompt: 'y' }, 2000)).run).toBe(true);
  });

  it('a key still being processed is a 409 with Retry-After; a failed request frees its key', async () => {
    const { service } = setup();
    const first = await service.start('key_1', 'k', '/e', {}, 1000);
    await expect(service.start('key_1', 'k', '/e', {}, 1500)).rejects.toThrow(
      expect.objectContaining({ code: 'idempotency_in_progress', headers: { 'retry-after': '1' } }),
    );
    if (!first.run) throw new Error('unreachable');
    await service.finish(first.claim, 400, '{"error":{}}');
    expect((await service.start('key_1', 'k', '/e', { changed: true }, 1600)).run).toBe(true);
  });

  it("a stale claim whose task was committed is answered with that task's create reply, once stored", async () => {
    const { store, service } = setup();
    const claimedAt = 10_000;
    const first = await service.start('key_1', 'died', '/v1/pic/images', { model: 'pic', prompt: 'x' }, claimedAt);
    expect(first.run).toBe(true);
    await insertTask(store.tasks, {
      id: 'task_orphan',
      ownerKeyId: 'key_1',
      family: 'pic',
      form: null,
      model: 'pic',
      provider: 'sandbox',
      amount: 1,
      createdAt: claimedAt,
      request: { params: { prompt: 'x' }, output: { kind: 'image', width: 8, height: 8, format: 'png' }, media: mediaRefs() },
      idempotencyKey: idempotencyTaskKey('key_1', 'died', claimedAt),
    });
    const later = claimedAt + STALE_CLAIM_MS + 1;
    const recovered = await service.start('key_1', 'died', '/v1/pic/images', { model: 'pic', prompt: 'x' }, later);
    expect(recovered).toMatchObject({ run: false, statusCode: 200 });
    if (recovered.run) throw new Error('unreachable');
    expect(JSON.parse(recovered.payload)).toMatchObject({ id: 'task_orphan', object: 'image', status: 'queued', model: 'pic' });
    expect(await service.start('key_1', 'died', '/v1/pic/images', { model: 'pic', prompt: 'x' }, later + 1)).toEqual(recovered);
  });

  it('a stale claim without a task is claimed again; malformed keys are a 400 naming the header', async () => {
    const { service } = setup();
    await service.start('key_1', 'k', '/e', {}, 1000);
    expect((await service.start('key_1', 'k', '/e', {}, 1000 + STALE_CLAIM_MS + 1)).run).toBe(true);
    for (const bad of ['', 'has space', 'x'.repeat(256), ['a', 'b']]) {
      await expect(service.start('key_1', bad, '/e', {})).rejects.toThrow(expect.objectContaining({ code: 'invalid_request', param: 'Idempotency-Key' }));
    }
  });
});

describe('canonicalJson', () => {
  it('sorts the keys of every object, keeps array order, writes values as JSON does', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: null, y: 'é\n' }], c: true } })).toBe('{"a":{"c":true,"d":[3,{"y":"é\\n","z":null}]},"b":1}');
    expect(canonicalJson(JSON.parse('{"n":1.0,"m":1e2}'))).toBe('{"m":100,"n":1}');
    expect(canonicalJson([2, 1])).not.toBe(canonicalJson([1, 2]));
    expect(canonicalJson(undefined)).toBe('null');
  });
});
