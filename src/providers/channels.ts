/**
 * Channels: the configured providers as the places calls go to (G90-G91). Each has a
 * bound on the calls in flight at it from this process (`concurrency`) and a circuit breaker: after
 * `failuresToOpen` channel faults in a row (ChannelError: refused, reset, timed out, 401/402/403,
 * 429, 5xx) it opens and takes no calls for `openMs`, then lets one probe through (half-open): a
 * success closes it, a fault opens it again for twice as long (at most `maxOpenMs`). A dead channel
 * therefore costs one timeout per interval, not one per request. State changes are logged.
 */
import type { Logger } from 'pino';
import { createLimiter, type Limiter } from '../limiter.js';
import { inSpan, SpanKind } from '../tracing/tracing.js';
import type { RouteCandidate } from '../contract/task-request.js';
import { ChannelError } from './types.js';

/** How an upstream call ended: answered, a channel fault (G91), another error (the request's own, an abort), or refused by the open circuit. */
export type UpstreamOutcome = 'ok' | 'fault' | 'error' | 'circuit_open';

/**
 * A route's candidates in the order to try them for one call: by priority, and within a priority
 * a weighted random order (each next pick in proportion to its weight among those left).
 */
export function orderCandidates(candidates: readonly RouteCandidate[], random: () => number = Math.random): RouteCandidate[] {
  const byPriority = new Map<number, RouteCandidate[]>();
  for (const c of candidates) byPriority.set(c.priority, [...(byPriority.get(c.priority) ?? []), c]);
  const out: RouteCandidate[] = [];
  for (const priority of [...byPriority.keys()].sort((a, b) => a - b)) {
    const left = [...byPriority.get(priority)!];
    while (left.length > 0) {
      let pick = random() * left.reduce((sum, c) => sum + c.weight, 0);
      let i = 0;
      for (; i < left.length - 1; i++) {
        pick -= left[i]!.weight;
        if (pick < 0) break;
      }
      out.push(...left.splice(i, 1));
    }
  }
  return out;
}

export type CircuitState = 'closed' | 'open' | 'half-open';

export interface BreakerSettings {
  /** Channel faults in a row that open the circuit. */
  failuresToOpen: number;
  /** How long it stays open the first time, ms; doubled after each failed probe. */
  openMs: number;
  maxOpenMs: number;
}

export const DEFAULT_BREAKER: BreakerSettings = { failuresToOpen: 5, openMs: 30_000, maxOpenMs: 5 * 60_000 };

class Breaker {
  state: CircuitState = 'closed';
  private failures = 0;
  private openFor: number;
  private openUntil = 0;
  private probing = false;

  constructor(private readonly settings: BreakerSettings) {
    this.openFor = settings.openMs;
  }

  /** Whether a call may go now; in half-open, only one (the probe) until it ends. */
  allow(now: number): boolean {
    if (this.state === 'closed') return true;
    if (this.state === 'open' && now >= this.openUntil) {
      this.state = 'half-open';
      this.probing = false;
    }
    if (this.state === 'half-open' && !this.probing) {
      this.probing = true;
      return true;
    }
    return false;
  }

  /** Whether calls would be refused now (without taking the half-open probe). */
  blocked(now: number): boolean {
    return (this.state === 'open' && now < this.openUntil) || (this.state === 'half-open' && this.probing);
  }

  /** A half-open probe that never went out: the next call may probe. */
  release(): void {
    this.probing = false;
  }

  retryAfterMs(now: number): number {
    return this.state === 'open' ? Math.max(0, this.openUntil - now) : 0;
  }

  success(): CircuitState {
    this.failures = 0;
    this.probing = false;
    this.openFor = this.settings.openMs;
    this.state = 'closed';
    return this.state;
  }

  failure(now: number): CircuitState {
    this.failures++;
    if (this.state === 'half-open' || this.failures >= this.settings.failuresToOpen) {
      if (this.state === 'half-open') this.openFor = Math.min(this.settings.maxOpenMs, this.openFor * 2);
      this.state = 'open';
      this.openUntil = now + this.openFor;
      this.probing = false;
    }
    return this.state;
  }
}

export interface ChannelsOptions {
  log: Logger;
  /** Calls in flight at once at a channel from this process. */
  concurrencyOf(provider: string): number;
  breaker?: BreakerSettings;
  now?: () => number;
  /** Told of every call's outcome and, when one went out, its length in seconds (metrics, G224). */
  observe?: (provider: string, outcome: UpstreamOutcome, seconds?: number) => void;
  /** Told of each change of a circuit (G322: shared through the store with the other processes). */
  onStateChange?: (provider: string, state: CircuitState, at: number) => void;
  /** Told of each channel fault's error (G322: the channel's last error, scrubbed by the listener). */
  onFault?: (provider: string, err: unknown, at: number) => void;
}

export class Channels {
  private readonly breakers = new Map<string, Breaker>();
  private readonly limiters = new Map<string, Limiter>();
  private readonly now: () => number;

  constructor(private readonly opts: ChannelsOptions) {
    this.now = opts.now ?? Date.now;
  }

  /** The state of a channel's circuit. */
  state(provider: string): CircuitState {
    return this.breaker(provider).state;
  }

  /** Candidates whose circuit does not refuse calls now, in the given order. */
  usable(candidates: readonly RouteCandidate[]): RouteCandidate[] {
    const now = this.now();
    return candidates.filter((c) => !this.breaker(c.provider).blocked(now));
  }

  /** How long until one of these channels takes calls again, ms (0: one takes them now). */
  retryAfterMs(candidates: readonly RouteCandidate[]): number {
    const now = this.now();
    return Math.min(...candidates.map((c) => this.breaker(c.provider).retryAfterMs(now)));
  }

  /**
   * One call to a channel: it waits for one of the channel's slots, and is refused at once with a
   * ChannelError when the circuit is open. A ChannelError from `fn` counts as a fault of the
   * channel (unless it says otherwise); anything else (an answer, the request's own fault, an
   * answer about one task that cannot be used, G272) as a sign of life.
   */
  async call<T>(provider: string, fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    return inSpan(`upstream ${provider}`, SpanKind.CLIENT, { 'mediagate.channel': provider }, async (span) => {
      const lease = await this.acquire(provider, signal);
      let outcome: UpstreamOutcome = 'error';
      try {
        const answer = await fn();
        outcome = 'ok';
        return answer;
      } catch (err) {
        if (err instanceof ChannelError && err.countsAgainstChannel) {
          outcome = 'fault';
          this.opts.onFault?.(provider, err, this.now());
        }
        throw err;
      } finally {
        span.setAttribute('mediagate.upstream.outcome', outcome);
        lease.release(outcome === 'fault', outcome);
      }
    });
  }

  /**
   * A slot at a channel held until released (a chat stream holds it while it streams): refused at
   * once with a ChannelError when the circuit is open. `release(failed)` records the outcome (a
   * channel fault, or a sign of life) and frees the slot; only the first call counts. `outcome`
   * (metrics) tells an error that is no channel fault from an answer (default: by `failed`).
   */
  async acquire(provider: string, signal?: AbortSignal): Promise<{ release(failed: boolean, outcome?: UpstreamOutcome): void }> {
    const breaker = this.breaker(provider);
    const before = breaker.state;
    const allowed = breaker.allow(this.now());
    if (breaker.state !== before) this.opts.onStateChange?.(provider, breaker.state, this.now()); // open -> half-open: its time is up
    if (!allowed) {
      this.opts.observe?.(provider, 'circuit_open');
      throw new ChannelError(`the channel ${provider} is not taking calls (its circuit is open)`, { retryAfterMs: breaker.retryAfterMs(this.now()) });
    }
    let free: () => void;
    try {
      free = await this.limiter(provider).acquire(signal);
    } catch (err) {
      if (breaker.state === 'half-open') breaker.release(); // the probe never went: another may
      throw err;
    }
    let done = false;
    const started = performance.now();
    return {
      release: (failed, outcome) => {
        if (done) return;
        done = true;
        free();
        this.record(provider, breaker, failed);
        this.opts.observe?.(provider, outcome ?? (failed ? 'fault' : 'ok'), (performance.now() - started) / 1000);
      },
    };
  }

  private record(provider: string, breaker: Breaker, failed: boolean): void {
    const before = breaker.state;
    const after = failed ? breaker.failure(this.now()) : breaker.success();
    if (after !== before) {
      this.opts.onStateChange?.(provider, after, this.now());
      const level = after === 'closed' ? 'info' : 'warn';
      this.opts.log[level]({ channel: provider, from: before, to: after }, `channel ${provider}: circuit ${after}`);
    }
  }

  private breaker(provider: string): Breaker {
    let b = this.breakers.get(provider);
    if (!b) {
      b = new Breaker(this.opts.breaker ?? DEFAULT_BREAKER);
      this.breakers.set(provider, b);
    }
    return b;
  }

  private limiter(provider: string): Limiter {
    let l = this.limiters.get(provider);
    if (!l) {
      l = createLimiter(Math.max(1, this.opts.concurrencyOf(provider)));
      this.limiters.set(provider, l);
    }
    return l;
  }
}
