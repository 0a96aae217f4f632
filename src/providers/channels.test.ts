import { describe, expect, it } from 'vitest';
import { createLogger } from '../logger.js';
import { Channels, orderCandidates } from './channels.js';
import type { RouteCandidate } from '../contract/task-request.js';
import { ChannelError, UnexpectedReply, UnrecoverableError } from './types.js';

const c = (provider: string, priority: number, weight = 1): RouteCandidate => ({ provider, priority, weight });

describe('candidate order (G90)', () => {
  it('by priority; within one, a weighted random order', () => {
    const route = [c('backup', 1), c('a', 0, 3), c('b', 0, 1)];
    expect(orderCandidates(route, () => 0).map((x) => x.provider)).toEqual(['a', 'b', 'backup']);
    expect(orderCandidates(route, () => 0.8).map((x) => x.provider)).toEqual(['b', 'a', 'backup']);
    // weights 3:1 -> a first three times in four
    let seed = 1;
    const rand = () => {
      seed = (seed * 16807) % 2147483647;
      return seed / 2147483647;
    };
    let aFirst = 0;
    for (let i = 0; i < 4000; i++) if (orderCandidates(route, rand)[0]!.provider === 'a') aFirst++;
    expect(aFirst / 4000).toBeGreaterThan(0.7);
    expect(aFirst / 4000).toBeLessThan(0.8);
  });
});

describe('circuit breakers (G91)', () => {
  function setup() {
    let now = 1_000_000;
    const channels = new Channels({
      log: createLogger('silent'),
      concurrencyOf: () => 2,
      now: () => now,
      breaker: { failuresToOpen: 3, openMs: 1000, maxOpenMs: 4000 },
    });
    return {
      channels,
      advance: (ms: number) => {
        now += ms;
      },
    };
  }
  const fault = () => Promise.reject(new ChannelError('503'));
  const ok = () => Promise.resolve('ok');

  it('per-task reply problems never count: an UnexpectedReply, a ChannelError about one task (G272)', async () => {
    const { channels } = setup();
    for (let i = 0; i < 10; i++) {
      await expect(
        channels.call('up', () => Promise.reject(new UnexpectedReply('answered with a task status the contract does not have ("unknown")'))),
      ).rejects.toThrow(UnexpectedReply);
      await expect(channels.call('up', () => Promise.reject(new ChannelError('idempotency_in_progress', { countsAgainstChannel: false })))).rejects.toThrow(
        ChannelError,
      );
    }
    expect(channels.state('up')).toBe('closed');
    // they end a run of faults, as any answer does
    await expect(channels.call('up', fault)).rejects.toThrow('503');
    await expect(channels.call('up', fault)).rejects.toThrow('503');
    await expect(channels.call('up', () => Promise.reject(new UnexpectedReply('malformed JSON')))).rejects.toThrow();
    await expect(channels.call('up', fault)).rejects.toThrow('503');
    expect(channels.state('up')).toBe('closed');
  });

  it('opens after consecutive channel faults, refuses at once while open, probes once, closes on success', async () => {
    const { channels, advance } = setup();
    for (let i = 0; i < 3; i++) await expect(channels.call('up', fault)).rejects.toThrow('503');
    expect(channels.state('up')).toBe('open');
    let ran = false;
    await expect(
      channels.call('up', async () => {
        ran = true;
        return 'x';
      }),
    ).rejects.toThrow(/circuit is open/);
    expect(ran).toBe(false);
    expect(channels.usable([c('up', 0), c('down', 1)]).map((x) => x.provider)).toEqual(['down']);
    expect(channels.retryAfterMs([c('up', 0)])).toBe(1000);
    advance(1000);
    expect(await channels.call('up', ok)).toBe('ok'); // the probe
    expect(channels.state('up')).toBe('closed');
  });

  it("a failed probe opens it again for twice as long; the request's own errors are signs of life", async () => {
    const { channels, advance } = setup();
    for (let i = 0; i < 3; i++) await channels.call('up', fault).catch(() => undefined);
    advance(1000);
    await channels.call('up', fault).catch(() => undefined);
    expect(channels.state('up')).toBe('open');
    expect(channels.retryAfterMs([c('up', 0)])).toBe(2000);
    advance(2000);
    await expect(channels.call('up', () => Promise.reject(new UnrecoverableError('bad prompt')))).rejects.toThrow('bad prompt');
    expect(channels.state('up')).toBe('closed');
    // faults not in a row do not open it
    await channels.call('up', fault).catch(() => undefined);
    await channels.call('up', fault).catch(() => undefined);
    await channels.call('up', ok);
    await channels.call('up', fault).catch(() => undefined);
    expect(channels.state('up')).toBe('closed');
  });

  it('bounds the calls in flight at a channel', async () => {
    const { channels } = setup();
    let running = 0;
    let peak = 0;
    const slow = async () => {
      running++;
      peak = Math.max(peak, running);
      await new Promise((r) => setTimeout(r, 10));
      running--;
      return 1;
    };
    await Promise.all(Array.from({ length: 6 }, () => channels.call('up', slow)));
    expect(peak).toBe(2);
  });
});

describe('call outcomes for metrics (G224)', () => {
  it('ok, fault, error, circuit_open (no duration: nothing was sent), and a held slot by its release', async () => {
    const seen: Array<[string, string, boolean]> = [];
    const channels = new Channels({
      log: createLogger('silent'),
      concurrencyOf: () => 2,
      breaker: { failuresToOpen: 1, openMs: 60_000, maxOpenMs: 60_000 },
      observe: (provider, outcome, seconds) => seen.push([provider, outcome, seconds !== undefined && seconds >= 0]),
    });
    await channels.call('a', () => Promise.resolve('ok'));
    await expect(channels.call('a', () => Promise.reject(new UnrecoverableError('bad request')))).rejects.toThrow('bad request');
    await expect(channels.call('a', () => Promise.reject(new ChannelError('503')))).rejects.toThrow('503');
    await expect(channels.call('a', () => Promise.resolve('never'))).rejects.toThrow('circuit is open');
    const lease = await channels.acquire('b');
    lease.release(false);
    lease.release(true); // only the first release counts
    expect(seen).toEqual([
      ['a', 'ok', true],
      ['a', 'error', true],
      ['a', 'fault', true],
      ['a', 'circuit_open', false],
      ['b', 'ok', true],
    ]);
  });
});
