/**
 * The channels of the admin API (G322, G323): every provider with its route candidacies, its
 * circuit as last changed by any process, the tasks processing at it, outcomes and latency over the
 * last 5 minutes and hour (the store's per-minute rows, added up by every process), its last error;
 * and a probe, a cheap call that shows the upstream answers with the configured key, audited.
 */
import type { AdminChannel, AdminChannelList, AdminChannelProbe } from '../contract/admin-channels.js';
import { AppError } from '../errors.js';
import type { RouteCandidate } from '../contract/task-request.js';
import { ProbeFailed } from '../providers/probe.js';
import type { ProviderRegistry } from '../providers/registry.js';
import type { AdminStore, AuditStore, ChannelMinute } from '../store/types.js';
import { auditEntry, type Actor } from './actor.js';
import { scrubError, type ChannelStats } from './channel-stats.js';

export interface ChannelAdminDeps {
  admin: AdminStore;
  audit: AuditStore;
  providers: ProviderRegistry;
  routes: Record<string, RouteCandidate[]>;
  typeOf(provider: string): string | null;
  /** This process's pending outcomes, written before a read. */
  stats?: ChannelStats;
  now?: () => number;
}

const seconds = (ms: number): number => Math.floor(ms / 1000);

function windowOf(rows: readonly ChannelMinute[]): AdminChannel['last_5m'] {
  const t = rows.reduce(
    (a, r) => ({
      ok: a.ok + r.ok,
      faults: a.faults + r.faults,
      errors: a.errors + r.errors,
      refused: a.refused + r.refused,
      timed: a.timed + r.callsTimed,
      seconds: a.seconds + r.seconds,
    }),
    { ok: 0, faults: 0, errors: 0, refused: 0, timed: 0, seconds: 0 },
  );
  return {
    calls: t.ok + t.faults + t.errors + t.refused,
    ok: t.ok,
    faults: t.faults,
    errors: t.errors,
    refused: t.refused,
    latency_ms: t.timed === 0 ? null : Math.round((t.seconds / t.timed) * 1000 * 10) / 10,
  };
}

export class ChannelAdmin {
  private readonly now: () => number;

  constructor(private readonly deps: ChannelAdminDeps) {
    this.now = deps.now ?? Date.now;
  }

  async list(): Promise<AdminChannelList> {
    await this.deps.stats?.flush();
    const now = this.now();
    const [states, minutes, inFlight] = await Promise.all([
      this.deps.admin.channelStates(),
      this.deps.admin.channelMinutes(now - 3_600_000),
      this.deps.admin.processingByProvider(),
    ]);
    const stateOf = new Map(states.map((s) => [s.channel, s]));
    const ids = this.deps.providers.ids().sort();
    return {
      object: 'list',
      data: ids.map((id): AdminChannel => {
        const provider = this.deps.providers.get(id)!;
        const state = stateOf.get(id);
        const mine = minutes.filter((m) => m.channel === id);
        return {
          id,
          object: 'channel',
          type: this.deps.typeOf(id),
          families: [...provider.capabilities.families],
          cancel: provider.cancel !== undefined,
          routes: Object.entries(this.deps.routes).flatMap(([model, candidates]) =>
            candidates.filter((c) => c.provider === id).map((c) => ({ model, upstream_model: c.model ?? null, priority: c.priority, weight: c.weight })),
          ),
          circuit: { state: state?.state ?? 'closed', since: state && state.since > 0 ? seconds(state.since) : null },
          in_flight: inFlight[id] ?? 0,
          last_5m: windowOf(mine.filter((m) => m.minute >= now - 5 * 60_000)),
          last_hour: windowOf(mine),
          last_error: state?.lastError && state.lastErrorAt !== null ? { message: state.lastError, at: seconds(state.lastErrorAt) } : null,
        };
      }),
    };
  }

  /** One probe of the channel `id`: its answer, whether or not the upstream passed; audited. */
  async probe(id: string, actor: Actor): Promise<AdminChannelProbe> {
    const provider = this.deps.providers.get(id);
    if (!provider) throw new AppError('channel_not_found', `No provider (channel) has id ${id}`, { param: 'id' });
    const started = performance.now();
    const at = this.now();
    let reply: AdminChannelProbe;
    if (!provider.probe) {
      reply = {
        object: 'channel_probe',
        channel: id,
        ok: false,
        call: null,
        status: null,
        latency_ms: 0,
        error: `provider ${id} has no probe`,
        at: seconds(at),
      };
    } else {
      try {
        const result = await provider.probe(AbortSignal.timeout(15_000));
        reply = {
          object: 'channel_probe',
          channel: id,
          ok: true,
          call: result.call,
          status: result.status,
          latency_ms: Math.round(performance.now() - started),
          error: null,
          at: seconds(at),
        };
      } catch (err) {
        reply = {
          object: 'channel_probe',
          channel: id,
          ok: false,
          call: err instanceof ProbeFailed ? err.call : null,
          status: err instanceof ProbeFailed ? err.status : null,
          latency_ms: Math.round(performance.now() - started),
          error: scrubError(err instanceof Error ? err.message : String(err)),
          at: seconds(at),
        };
      }
    }
    await this.deps.audit.append(auditEntry(actor, 'channel.probe', id, { ok: reply.ok, call: reply.call, status: reply.status, error: reply.error }, at));
    return reply;
  }
}
