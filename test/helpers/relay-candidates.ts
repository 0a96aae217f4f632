/**
 * Failover between relay channels (G90, G91): upstream mediagates (sandbox), each
 * behind a fault proxy of its own, and a relaying mediagate whose every model, media and chat, is
 * routed to relay channels over those proxies (`a` first, then `b`, by priority). Each upstream
 * serves `{power_base_url}` under `/power` and `{api_base_url}` under `/api`, and its public URL is
 * its proxy's, so its result files pass the proxy too. Test-only.
 */
import type { RouteCandidate } from '../../src/contract/task-request.js';
import { createRelayProvider } from '../../src/providers/relay/index.js';
import type { Provider } from '../../src/providers/types.js';
import { startFaultProxy, type FaultProxy, type SeenRequest } from './fault-proxy.js';
import type { HarnessOptions } from './harness.js';
import { listeningGateway, type ListeningGateway } from './listening-gateway.js';
import { RELAYING_BACKOFF_SCALE } from './relay-pair.js';
import { countTasksByStatus } from './task-rows.js';

/** One candidate channel: the relay provider, its proxy and the upstream behind it. */
export interface RelayChannel {
  id: string;
  proxy: FaultProxy;
  upstream: ListeningGateway;
  relay: Provider;
  /** Creates the proxy received (POSTs carrying an Idempotency-Key), whatever was answered. */
  creates(): SeenRequest[];
  /** Requests the proxy received whose path names `upstreamId` (checks, cancels). */
  about(upstreamId: string): SeenRequest[];
  /** Tasks the upstream holds: every create it accepted. */
  upstreamTasks(): Promise<number>;
}

export interface RelayCandidates {
  a: RelayChannel;
  b: RelayChannel;
  relaying: ListeningGateway;
  /** One call to the relaying gateway over HTTP with its key (and `headers`, e.g. an Idempotency-Key). */
  call(method: 'GET' | 'POST', path: string, body?: unknown, headers?: Record<string, string>): Promise<Answer>;
  close(): Promise<void>;
}

export interface Answer {
  status: number;
  json: Record<string, any>;
  text: string;
  headers: Headers;
}

export interface RelayCandidatesOptions {
  /** Options of the upstream behind channel `id`. */
  upstream?: (id: 'a' | 'b') => HarnessOptions;
  /** Options of the relaying gateway (breaker, clock, env); its providers and routes are the relays. */
  relaying?: HarnessOptions;
}

async function startChannel(id: string, options: HarnessOptions = {}): Promise<RelayChannel> {
  const proxy = await startFaultProxy();
  const upstream = await listeningGateway({
    ...options,
    env: { MEDIAGATE_PUBLIC_URL: proxy.url, MEDIAGATE_POWER_PREFIX: '/power', MEDIAGATE_API_PREFIX: '/api', ...options.env },
  });
  proxy.setTarget(upstream.origin);
  const relay = createRelayProvider({
    id,
    baseUrl: proxy.url,
    powerBaseUrl: `${proxy.url}/power`,
    apiBaseUrl: `${proxy.url}/api`,
    apiKey: upstream.key,
    pollSeconds: 0.05,
  });
  return {
    id,
    proxy,
    upstream,
    relay,
    creates: () => proxy.requests.filter((r) => r.method === 'POST' && r.idempotencyKey !== undefined),
    about: (upstreamId) => proxy.requests.filter((r) => r.url.split('?', 1)[0]!.split('/').includes(upstreamId)),
    upstreamTasks: async () => Object.values(await countTasksByStatus(upstream.store.tasks)).reduce((sum, n) => sum + n, 0),
  };
}

export async function startRelayCandidates(options: RelayCandidatesOptions = {}): Promise<RelayCandidates> {
  const a = await startChannel('a', options.upstream?.('a'));
  const b = await startChannel('b', options.upstream?.('b'));
  // every model, media and chat: `a` first, `b` when `a` cannot take the call
  const route: RouteCandidate[] = [
    { provider: 'a', priority: 0, weight: 1 },
    { provider: 'b', priority: 1, weight: 1 },
  ];
  // the relaying worker's own waits a tenth of an operator's, as in relay-pair.ts (G267)
  const relaying = await listeningGateway({ backoffScale: RELAYING_BACKOFF_SCALE, ...options.relaying, providers: [a.relay, b.relay], routes: { '*': route } });
  return {
    a,
    b,
    relaying,
    async call(method, path, body, headers = {}) {
      const res = await fetch(`${relaying.origin}${path}`, {
        method,
        headers: { authorization: `Bearer ${relaying.key}`, ...(body !== undefined && { 'content-type': 'application/json' }), ...headers },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      });
      const text = await res.text();
      let json: Record<string, any> = {};
      try {
        json = JSON.parse(text) as Record<string, any>;
      } catch {
        /* an event stream: the text is the answer */
      }
      return { status: res.status, json, text, headers: res.headers };
    },
    close: async () => {
      await relaying.close();
      for (const c of [a, b]) {
        await c.upstream.close();
        await c.proxy.close();
      }
    },
  };
}
