/**
 * Gateway to gateway: an upstream mediagate (sandbox) behind the fault proxy (fault-proxy.ts),
 * and a relaying mediagate whose only media provider is a `relay` pointing at that proxy. The upstream serves
 * `{power_base_url}` under `/power` and `{api_base_url}` under `/api`, so a call sent to the wrong
 * prefix is a 404 there; its public URL is the proxy's, so its result URLs go through the proxy
 * too (and are at the relay's own origin: trusted). Both listen on real ports. Test-only.
 */
import type { RouteCandidate } from '../../src/contract/task-request.js';
import { chatRoutesOf } from '../../src/providers/registry.js';
import { createRelayProvider, type RelayProviderOptions } from '../../src/providers/relay/index.js';
import type { Provider } from '../../src/providers/types.js';
import { startFaultProxy, type FaultProxy, type SeenRequest } from './fault-proxy.js';
import type { HarnessOptions } from './harness.js';
import { listeningGateway, type ListeningGateway } from './listening-gateway.js';

/**
 * The relaying gateway's own waits (before a retry, after a channel could not take a task) times
 * this: ~100 ms where an operator's gateway waits ~1 s, 200 ms where it waits 2 s (G267). An
 * upstream's Retry-After and a circuit's open period are waited for whole.
 */
export const RELAYING_BACKOFF_SCALE = 0.1;

export interface RelayPair {
  proxy: FaultProxy;
  upstream: ListeningGateway;
  relaying: ListeningGateway;
  relay: Provider;
  /** POSTs the proxy saw whose Idempotency-Key is `key` (the creates of one generation), in order. */
  createsWithKey(key: string): SeenRequest[];
  close(): Promise<void>;
}

export interface RelayPairOptions {
  upstream?: HarnessOptions;
  relaying?: HarnessOptions;
  relay?: Partial<RelayProviderOptions>;
  /** Routes of the relaying gateway besides `*` and every chat model -> relay (e.g. renamed models). */
  routes?: Record<string, RouteCandidate[]>;
  /** The upstream name of a chat model, where it differs. */
  chatModel?: (model: string) => string | undefined;
}

export async function startRelayPair(options: RelayPairOptions = {}): Promise<RelayPair> {
  const proxy = await startFaultProxy();
  const upstream = await listeningGateway({
    ...options.upstream,
    env: { MEDIAGATE_PUBLIC_URL: proxy.url, MEDIAGATE_POWER_PREFIX: '/power', MEDIAGATE_API_PREFIX: '/api', ...options.upstream?.env },
  });
  proxy.setTarget(upstream.origin);
  const relay = createRelayProvider({
    id: 'relay',
    baseUrl: proxy.url,
    powerBaseUrl: `${proxy.url}/power`,
    apiBaseUrl: `${proxy.url}/api`,
    apiKey: upstream.key,
    pollSeconds: 0.05,
    ...options.relay,
  });
  const routes: Record<string, RouteCandidate[]> = {
    '*': [{ provider: 'relay', priority: 0, weight: 1 }],
    ...chatRoutesOf({ '*': 'relay' }, (model) => options.chatModel?.(model)),
    ...options.routes,
  };
  // the relaying worker's own waits (retries, waiting for a channel) a tenth of an operator's: the faults here are on purpose (G267)
  const relaying = await listeningGateway({ backoffScale: RELAYING_BACKOFF_SCALE, ...options.relaying, providers: [relay], routes });
  return {
    proxy,
    upstream,
    relaying,
    relay,
    createsWithKey: (key) => proxy.requests.filter((r) => r.method === 'POST' && r.idempotencyKey === key),
    close: async () => {
      await relaying.close();
      await upstream.close();
      await proxy.close();
    },
  };
}

export interface Answer {
  status: number;
  json: Record<string, any>;
  headers: Headers;
}

/** One call to the relaying gateway over HTTP with its key. */
export async function callRelaying(p: RelayPair, method: 'GET' | 'POST', path: string, body?: unknown): Promise<Answer> {
  const res = await fetch(`${p.relaying.origin}${path}`, {
    method,
    headers: { authorization: `Bearer ${p.relaying.key}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  return { status: res.status, json: (await res.json()) as Record<string, any>, headers: res.headers };
}
