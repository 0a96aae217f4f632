/**
 * Gauges read from the store at scrape time (G223): in-flight tasks by family, model and state,
 * the queue's depth and the age of its oldest task, the workers alive (G264), and the credits held and captured over all
 * accounts. One read serves every gauge of a scrape and is kept `cacheMs`, so frequent scrapes (or
 * several scrapers) cost one small query per period. The numbers are the shared store's: in a
 * cluster every process reports the same ones.
 */
import { Gauge, type Registry } from 'prom-client';
import type { LiveTaskCount } from '../store/types.js';

export interface StoreReadings {
  liveCounts(): Promise<LiveTaskCount[]>;
  /** Micro-credits held (open holds) and captured (charged), summed over the accounts. */
  creditTotals(): Promise<{ heldMicro: number; capturedMicro: number }>;
  /** Workers whose heartbeat is recent, per role (G264); absent: no such gauge. */
  liveWorkers?(): Promise<Array<{ role: string; count: number }>>;
}

interface Snapshot {
  at: number;
  live: LiveTaskCount[];
  credits: { heldMicro: number; capturedMicro: number };
  workers: Array<{ role: string; count: number }>;
}

/** What the gauges need of the gateway's metrics: the registry, and the model label (bounded). */
export interface GaugeHost {
  readonly registry: Registry;
  model(name: string): string;
}

export function collectStoreGauges(metrics: GaugeHost, readings: StoreReadings, cacheMs: number, now: () => number): void {
  const registers = [metrics.registry];
  // the last good read: a failed one leaves the gauges as they were and says so in mediagate_store_up
  let last: Snapshot | undefined;
  let cached: { at: number; read: Promise<boolean> } | undefined;
  const read = (): Promise<boolean> => {
    const t = now();
    if (cached && t - cached.at < cacheMs) return cached.read;
    const reading = Promise.all([readings.liveCounts(), readings.creditTotals(), readings.liveWorkers?.() ?? []]).then(
      ([live, credits, workers]) => {
        last = { at: t, live, credits, workers };
        return true;
      },
      () => {
        cached = undefined; // the next scrape tries again
        return false;
      },
    );
    cached = { at: t, read: reading };
    return reading;
  };
  const snapshot = async (): Promise<Snapshot | undefined> => {
    await read();
    return last;
  };

  new Gauge({
    name: 'mediagate_store_up',
    help: 'Whether the last read of the store for the gauges below succeeded (0: they keep their previous values)',
    registers,
    async collect() {
      this.set((await read()) ? 1 : 0);
    },
  });
  new Gauge({
    name: 'mediagate_tasks',
    help: 'Queued and processing tasks in the store, by family, model and state',
    labelNames: ['family', 'model', 'state'],
    registers,
    async collect() {
      const s = await snapshot();
      if (!s) return;
      this.reset();
      for (const r of s.live) this.inc({ family: r.family, model: metrics.model(r.model), state: r.status }, r.count);
    },
  });
  new Gauge({
    name: 'mediagate_queue_depth',
    help: 'Queued tasks in the store (waiting for a worker, retries included)',
    registers,
    async collect() {
      const s = await snapshot();
      if (s) this.set(s.live.filter((r) => r.status === 'queued').reduce((n, r) => n + r.count, 0));
    },
  });
  new Gauge({
    name: 'mediagate_queue_oldest_age_seconds',
    help: 'Age of the oldest queued task, from its submit (0: none queued)',
    registers,
    async collect() {
      const s = await snapshot();
      if (!s) return;
      const oldest = Math.min(...s.live.filter((r) => r.status === 'queued').map((r) => r.oldestCreatedAt));
      this.set(Number.isFinite(oldest) ? Math.max(0, s.at - oldest) / 1000 : 0);
    },
  });
  if (readings.liveWorkers) {
    new Gauge({
      name: 'mediagate_workers_live',
      help: 'Processes running tasks whose heartbeat in the store is recent (seen in the last 15 s), by role (worker, all)',
      labelNames: ['role'],
      registers,
      async collect() {
        const s = await snapshot();
        if (!s) return;
        this.reset();
        // the roles that run tasks are always there, 0 when none beats: an alert can read `== 0`
        for (const role of ['worker', 'all']) this.set({ role }, 0);
        for (const r of s.workers) this.set({ role: r.role }, r.count);
      },
    });
  }
  new Gauge({
    name: 'mediagate_credits_held',
    help: 'Credits held now by unsettled tasks and chat requests, over all accounts',
    registers,
    async collect() {
      const s = await snapshot();
      if (s) this.set(s.credits.heldMicro / 1_000_000);
    },
  });
  new Gauge({
    name: 'mediagate_credits_captured',
    help: 'Credits captured (charged) since the ledger began, over all accounts',
    registers,
    async collect() {
      const s = await snapshot();
      if (s) this.set(s.credits.capturedMicro / 1_000_000);
    },
  });
}
