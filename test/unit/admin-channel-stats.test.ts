/**
 * The channels' shared figures (G322) and a task's attempts (G320), without a server: errors are
 * scrubbed of secrets before any process writes them; outcomes are added per minute and written in
 * batches, kept when a write fails; attempts are read from the timeline.
 */
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { ChannelStats, scrubError } from '../../src/admin/channel-stats.js';
import { attemptsOf } from '../../src/admin/task-admin.js';
import type { ChannelMinute, TaskEvent } from '../../src/store/types.js';

describe('scrubError', () => {
  it.each([
    ['GET https://api.example.com/v1/x?key=AIzaSyA0123456789abcdef failed', 'GET https://api.example.com/v1/x?[redacted] failed'],
    ['401: Incorrect API key provided: sk-proj-0123456789abcdefXYZ', '401: Incorrect API key provided: [redacted]'],
    ['Authorization: Bearer r8_0123456789abcdefghij refused', 'Authorization: [redacted] [redacted] refused'],
    ['token=abc123 and password: hunter2', 'token=[redacted] and password: [redacted]'],
    ['a\nmulti\tline   message', 'a multi line message'],
  ])('%s', (raw, scrubbed) => {
    expect(scrubError(raw)).toBe(scrubbed);
  });

  it('keeps at most 300 characters', () => {
    expect(scrubError('x '.repeat(400))).toHaveLength(300);
  });
});

describe('ChannelStats', () => {
  const log = pino({ level: 'silent' });

  it('adds outcomes per channel and minute, writes them in one batch, and keeps them when the write fails', async () => {
    let now = 120_000;
    const written: ChannelMinute[][] = [];
    let fail = true;
    const stats = new ChannelStats(
      {
        addChannelMinutes: async (rows) => {
          if (fail) throw new Error('store down');
          written.push([...rows]);
        },
        setChannelState: async () => undefined,
        setChannelError: async () => undefined,
      },
      log,
      () => now,
    );
    stats.observe('a', 'ok', 0.5);
    stats.observe('a', 'fault', 1.5);
    stats.observe('a', 'circuit_open');
    stats.observe('b', 'error', 0.25);
    await stats.flush(); // fails: kept
    now += 60_000;
    stats.observe('a', 'ok', 1);
    fail = false;
    await stats.flush();
    expect(written).toHaveLength(1);
    const rows = written[0]!.sort((x, y) => (x.channel + x.minute).localeCompare(y.channel + y.minute));
    expect(rows).toEqual([
      { channel: 'a', minute: 120_000, ok: 1, faults: 1, errors: 0, refused: 1, callsTimed: 2, seconds: 2 },
      { channel: 'a', minute: 180_000, ok: 1, faults: 0, errors: 0, refused: 0, callsTimed: 1, seconds: 1 },
      { channel: 'b', minute: 120_000, ok: 0, faults: 0, errors: 1, refused: 0, callsTimed: 1, seconds: 0.25 },
    ]);
    await stats.flush();
    expect(written).toHaveLength(1); // nothing pending: no write
  });

  it("writes a channel's error scrubbed, the same text at most once per 5 s", async () => {
    let now = 0;
    const errors: string[] = [];
    const stats = new ChannelStats(
      {
        addChannelMinutes: async () => undefined,
        setChannelState: async () => undefined,
        setChannelError: async (_channel, error) => {
          errors.push(error);
        },
      },
      log,
      () => now,
    );
    stats.fault('a', new Error('refused (key=sk-live-0123456789abcdef)'), now);
    stats.fault('a', new Error('refused (key=sk-live-0123456789abcdef)'), now + 1000);
    stats.fault('a', new Error('timed out'), now + 2000);
    now = 5_000;
    stats.fault('a', new Error('timed out'), now); // 3 s after the same text: not written again
    await new Promise((r) => setImmediate(r));
    expect(errors).toEqual(['refused (key=[redacted])', 'timed out']);
  });
});

describe('attemptsOf', () => {
  const event = (at: number, from: TaskEvent['from'], status: TaskEvent['status'], attempt: number, error: string | null = null): TaskEvent => ({
    id: at,
    taskId: 't',
    at: at * 1000,
    from,
    status,
    attempt,
    provider: 'p',
    upstreamId: null,
    error,
  });

  it('reads each attempt from the status changes: its start, end, outcome and error', () => {
    expect(
      attemptsOf([
        event(1, 'queued', 'processing', 1),
        event(2, 'processing', 'queued', 1, 'the upstream answered 502'),
        event(4, 'queued', 'processing', 2),
        event(5, 'processing', 'completed', 2),
      ]),
    ).toEqual([
      { attempt: 1, provider: 'p', started: 1, ended: 2, outcome: 'requeued', error: 'the upstream answered 502' },
      { attempt: 2, provider: 'p', started: 4, ended: 5, outcome: 'completed', error: null },
    ]);
    expect(attemptsOf([event(1, 'queued', 'processing', 1)])).toEqual([{ attempt: 1, provider: 'p', started: 1, ended: null, outcome: null, error: null }]);
    expect(attemptsOf([event(1, 'queued', 'cancelled', 0)])).toEqual([]);
  });
});
