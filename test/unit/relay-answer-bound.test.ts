/**
 * An upstream's answer larger than the bound of what is read (the relay's: 1 MiB). A 2xx one cannot
 * be read: an unexpected reply (G272). Any other status says what it is by itself: a 503 proxy page
 * of any size is the channel's fault, so a create moves on to the next candidate and a check is
 * made again later; it was read as an unexpected reply before its status was looked at (at a
 * create where a repeat is a second generation, that failed the task, G453). A chat call's error
 * answer is read up to 64 KiB and likewise taken by its status (G478).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRelayProvider } from '../../src/providers/relay/index.js';
import { ChannelError, UnexpectedReply, type Provider } from '../../src/providers/types.js';
import { classifyCheck, classifyStart, said, startScriptedUpstream, type ScriptedUpstream } from '../helpers/malformed-replies.js';
import { chatContext, chatRequest, context, KEY, picJob } from '../helpers/relay-unit.js';

let upstream: ScriptedUpstream;
let relay: Provider;
const next = { status: 200, body: '' };

beforeAll(async () => {
  upstream = await startScriptedUpstream(() => ({ status: next.status, body: next.body }));
  relay = createRelayProvider({ id: 'up', baseUrl: upstream.origin, apiKey: KEY, timeoutMs: 10_000 });
});
afterAll(async () => {
  await relay?.close?.();
  await upstream?.close();
});

const picTask = { id: 'task_up1', object: 'pic.task', model: 'pic', status: 'queued', progress: 0, image_url: null, error: null, created_at: 1 };

describe('relay: answers larger than the bound (1 MiB)', () => {
  const big = `<html>${'x'.repeat(2 * 1024 * 1024)}</html>`;

  it("a 503 is the channel's fault, at a create (the next candidate) and at a check, whatever its size", async () => {
    next.status = 503;
    next.body = big;
    try {
      const started = await classifyStart(() => relay.start!(picJob(), context()));
      expect(started.class, said(started)).toBe('next candidate');
      expect((started.error as ChannelError).message).toMatch(/failed \(HTTP 503\)/);
      const checked = await classifyCheck(() => relay.check!({ id: 'task_up1' }, picJob(), context()));
      expect(checked.error, said(checked)).toBeInstanceOf(ChannelError);
    } finally {
      next.status = 200;
    }
  });

  it('chat: an error answer larger than its 64 KiB read is taken by its status, cut there (G478)', async () => {
    const page = `<html>${'x'.repeat(2 * 1024 * 1024)}</html>`;
    try {
      next.status = 503; // a proxy's page: the channel's fault, the call moves to the next candidate
      next.body = page;
      let err = await relay.chat!.complete(chatRequest, chatContext()).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ChannelError);
      expect((err as ChannelError).message).toContain('HTTP 503');
      next.status = 400; // the request's own fault, whatever the size of the answer: no other upstream is asked
      err = await relay.chat!.complete(chatRequest, chatContext()).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).not.toBeInstanceOf(ChannelError);
      expect(err).toMatchObject({ status: 400, code: 'invalid_request' });
    } finally {
      next.status = 200;
    }
  });

  it('a 2xx answer that large cannot be read: an unexpected reply', async () => {
    next.body = JSON.stringify({ ...picTask, padding: big });
    const started = await classifyStart(() => relay.start!(picJob(), context()));
    expect(started.error, said(started)).toBeInstanceOf(UnexpectedReply);
    expect((started.error as Error).message).toMatch(/larger than 1048576 bytes/);
  });
});
