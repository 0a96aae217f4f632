/**
 * The JSON body's bytes (G440): text that is not well-formed UTF-8 is a 400 (decoding would have
 * turned it into a different prompt), and an empty body sent as JSON is no body on a route that
 * declares none (or an optional one), while a route that needs a body still says it is empty.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminOptions, ADMIN_KEY, withAdmin, type AdminHarness } from '../helpers/admin.js';
import { createHarness } from '../helpers/harness.js';
import { countTasksByStatus } from '../helpers/task-rows.js';

let h: AdminHarness;
beforeAll(async () => {
  h = withAdmin(await createHarness(adminOptions()));
});
afterAll(async () => {
  await h.close();
});

const send = (url: string, payload: Buffer | string, key: string = h.key) =>
  h.app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, payload });

describe('a body that is not well-formed UTF-8', () => {
  it('is a 400 invalid_json on a create, and nothing is stored', async () => {
    const before = await countTasksByStatus(h.store.tasks);
    const bytes = Buffer.concat([Buffer.from('{"model":"pic-2","prompt":"a'), Buffer.from([0xff, 0xfe]), Buffer.from('b"}')]);
    const res = await send('/v1/pic/images', bytes);
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().error).toMatchObject({ code: 'invalid_json', message: 'The body is not well-formed UTF-8 text; send JSON encoded as UTF-8' });
    expect(await countTasksByStatus(h.store.tasks)).toEqual(before);
  });

  it('is a 400 in the family error body on chat, and on the motion cancel call', async () => {
    const chat = await send(
      '/v1/chat/completions',
      Buffer.concat([Buffer.from('{"model":"chat-2.5-flash","messages":[{"role":"user","content":"'), Buffer.from([0xc3]), Buffer.from('"}]}')]),
    );
    expect(chat.statusCode).toBe(400);
    expect(chat.json().msg).toMatch(/not well-formed UTF-8/);
    const cancel = await send('/power/v1/motion/videos/task_unknown/cancel', Buffer.from([0x7b, 0x80, 0x7d]));
    expect(cancel.statusCode).toBe(400);
    expect(JSON.stringify(cancel.json())).toMatch(/not well-formed UTF-8/);
  });

  it('well-formed multi-byte text passes unchanged', async () => {
    const res = await send('/v1/pic/images', Buffer.from(JSON.stringify({ model: 'pic-2', prompt: 'un renard roux é 狐狸 🦊' }), 'utf8'));
    expect(res.statusCode, res.body).toBe(200);
    const task = await h.store.tasks.get(res.json().id as string);
    expect(JSON.stringify(task?.request)).toContain('"prompt":"un renard roux é 狐狸 🦊"');
  });
});

describe('an empty body sent as JSON', () => {
  it("is no body on routes that take none: the answer is the route's own (404 for an unknown id, not 400)", async () => {
    const revoke = await send('/admin/v1/keys/key_unknown/revoke', '', ADMIN_KEY);
    expect(revoke.statusCode, revoke.body).toBe(404);
    const cancel = await send('/admin/v1/tasks/task_unknown/cancel', '', ADMIN_KEY);
    expect(cancel.statusCode, cancel.body).toBe(404);
    const rotate = await send('/v1/webhooks/secret/rotate', '');
    expect(rotate.statusCode, rotate.body).toBe(200);
  });

  it('is no body where the body is optional (a key rotation without grace)', async () => {
    const key = await h.newKey();
    const res = await send(`/admin/v1/keys/${key.id}/rotate`, '', ADMIN_KEY);
    expect(res.statusCode, res.body).toBe(200);
    expect(typeof res.json().key).toBe('string');
  });

  it('is still a 400 where a body is needed', async () => {
    const res = await send('/v1/pic/images', '');
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatchObject({ code: 'invalid_json', message: 'The body is empty; send a JSON object' });
    const created = await send('/admin/v1/keys', '', ADMIN_KEY);
    expect(created.statusCode).toBe(400);
    expect(created.json().error.message).toBe('The body is empty; send a JSON object');
  });
});
