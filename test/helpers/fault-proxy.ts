/**
 * The one test proxy in front of upstreams (node:http on 127.0.0.1, port 0). Every request is read
 * whole, then forwarded to `target` (an upstream mediagate, a fake) unless a rule (method, path,
 * headers, body) says otherwise; every request is recorded with what was done to it, its body and
 * the target's answer (status, headers, text). Answers (chat SSE) pass through chunk by chunk.
 * `setDown(true)` makes the proxy a dead host (connection refused) until `setDown(false)` listens
 * again on the same port.
 *
 * Result files pass the proxy only if the upstream's result URLs point at it: start the proxy
 * first, the upstream with `MEDIAGATE_PUBLIC_URL: proxy.url`, then `proxy.setTarget(upstream url)`.
 * Connections to the target are not kept alive (no stale pooled socket ever turns into a fault
 * nobody injected); the proxy's own are kept 60 s.
 *
 * ```ts
 * const proxy = await startFaultProxy({ target: upstream.url });
 * proxy.addRule({ match: { method: 'POST', path: '/v1/motion/videos' }, times: 1, fault: { forwardThen: 'reset' } });
 * proxy.addRule({ match: { path: /^\/v1\/result\// }, fault: missingResult(proxy.goneUrl(404)) }); // fault-proxy-results.ts
 * proxy.addRule({ match: { body: /\[hold\]/ }, fault: 'hang' }); // held until the client gives up
 * ```
 */
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { answerFault, forwardRequest, sendMadeUp, type Fault, type FaultKind } from './fault-proxy-forward.js';

export type { Fault, RewriteContext, StatusFault } from './fault-proxy-forward.js';

/** Which requests a rule (or a wait) is about; every given part must match. */
export interface RequestMatch {
  method?: string;
  /** A string is the whole path without the query; a RegExp is tested against that path. */
  path?: string | RegExp;
  /** Header values by lower-case name, e.g. `{ 'idempotency-key': /\.2$/ }`. */
  headers?: Record<string, string | RegExp>;
  /** Tested against the request body (as text). */
  body?: RegExp;
}

export interface FaultRuleSpec {
  match?: RequestMatch;
  /** Matching requests let through (forwarded) before the rule applies (default 0). */
  skip?: number;
  /** How many matching requests it applies to after `skip` (default: every one). */
  times?: number;
  fault: Fault;
}

/** A rule as added: how often it matched and applied, and a way to take it out. */
export interface FaultRule {
  readonly spec: FaultRuleSpec;
  readonly matched: number;
  readonly applied: number;
  remove(): void;
}

/** One request the proxy received, in arrival order. */
export interface SeenRequest {
  /** Arrival order, from 0. */
  seq: number;
  /** When it arrived (`Date.now()`): a lower bound of anything the client did after the answer. */
  at: number;
  method: string;
  /** Path and query as received. */
  url: string;
  headers: http.IncomingHttpHeaders;
  idempotencyKey: string | undefined;
  /** The request body as text (at most the first MiB). */
  body: string;
  /** True once the whole body has arrived (or the connection ended). */
  received: boolean;
  /** What the proxy did: forwarded it, a fault, or answered one of its own `goneUrl`s. */
  action: 'forwarded' | FaultKind | 'gone';
  /** The status the client got; undefined while in flight, or when it got no answer. */
  status?: number;
  /** The target's status, when the request reached it. */
  targetStatus?: number;
  /** The target's answer headers. */
  targetHeaders?: http.IncomingHttpHeaders;
  /** The target's whole answer as text (at most the first MiB), once it ended; before any rewrite. */
  response?: string;
  /** Why the target could not be reached (the client got a 502). */
  targetError?: string;
  /**
   * Set when the connection closed before the client had a whole answer: `'proxy'` when the proxy
   * cut it (a reset fault, the target breaking off, `setDown`, `close`), `'client'` when the
   * client gave up (an abort, its own timeout).
   */
  closedBy?: 'client' | 'proxy';
}

export interface FaultProxy {
  /** The proxy's origin, `http://127.0.0.1:<port>`. */
  url: string;
  port: number;
  /** The target's origin ('' until one is set). */
  readonly target: string;
  /** Forward from now on to `url` (requests before a target is set get a 502). */
  setTarget(url: string): void;
  requests: SeenRequest[];
  addRule(spec: FaultRuleSpec): FaultRule;
  clearRules(): void;
  /** Down: stop listening (connection refused) and drop every open connection. Up: listen again on the same port. */
  setDown(down: boolean): Promise<void>;
  /** Resolves with the `count`-th received request matching `match` (counting those already seen). */
  waitForRequest(match?: RequestMatch, count?: number): Promise<SeenRequest>;
  /** A URL on this proxy that answers `status` with a JSON error body (a result file the upstream no longer has). */
  goneUrl(status?: number, name?: string): string;
  close(): Promise<void>;
}

const MAX_RECORDED_BODY = 1 << 20;
const GONE_PREFIX = '/__fault-proxy/gone/';

function headerText(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}

export function requestMatches(m: RequestMatch | undefined, req: { method: string; url: string; headers: http.IncomingHttpHeaders; body?: string }): boolean {
  if (m === undefined) return true;
  if (m.method !== undefined && m.method.toUpperCase() !== req.method) return false;
  const pathname = req.url.split('?', 1)[0]!;
  if (typeof m.path === 'string' && m.path !== pathname) return false;
  if (m.path instanceof RegExp && !m.path.test(pathname)) return false;
  for (const [name, want] of Object.entries(m.headers ?? {})) {
    const got = headerText(req.headers[name.toLowerCase()]);
    if (got === undefined || (typeof want === 'string' ? got !== want : !want.test(got))) return false;
  }
  if (m.body !== undefined && !m.body.test(req.body ?? '')) return false;
  return true;
}

/** Whether the request goes to the target (no fault, or one that acts on the target's answer). */
function forwards(fault: Fault | undefined): fault is undefined | Extract<Fault, { forwardThen: unknown } | { rewriteJson: unknown }> {
  return fault === undefined || (typeof fault === 'object' && ('forwardThen' in fault || 'rewriteJson' in fault));
}

interface RuleState {
  spec: FaultRuleSpec;
  matched: number;
  applied: number;
  removed: boolean;
}

export async function startFaultProxy(options: { target?: string } = {}): Promise<FaultProxy> {
  let target = options.target === undefined ? undefined : new URL(options.target);
  const agent = new http.Agent({ keepAlive: false });
  const sockets = new Set<Socket>();
  /** Requests whose answer is not complete yet. */
  const open = new Map<http.ServerResponse, SeenRequest>();
  let rules: RuleState[] = [];
  const waiters: Array<{ match: RequestMatch | undefined; count: number; resolve: (r: SeenRequest) => void }> = [];

  function settleWaiters(): void {
    for (const w of [...waiters]) {
      const hits = proxy.requests.filter((r) => r.received && requestMatches(w.match, r));
      if (hits.length >= w.count) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(hits[w.count - 1]!);
      }
    }
  }

  /** The first live rule matching `seen`, counted; undefined when it is let through. */
  function faultFor(seen: SeenRequest): Fault | undefined {
    for (const rule of rules) {
      const { skip = 0, times = Number.POSITIVE_INFINITY } = rule.spec;
      if (rule.removed || rule.applied >= times || !requestMatches(rule.spec.match, seen)) continue;
      rule.matched++;
      if (rule.matched <= skip) return undefined;
      rule.applied++;
      return rule.spec.fault;
    }
    return undefined;
  }

  const server = http.createServer((req, res) => {
    const url = req.url ?? '/';
    const seen: SeenRequest = {
      seq: proxy.requests.length,
      at: Date.now(),
      method: req.method ?? 'GET',
      url,
      headers: req.headers,
      idempotencyKey: headerText(req.headers['idempotency-key']),
      body: '',
      received: false,
      action: 'forwarded',
    };
    proxy.requests.push(seen);
    open.set(res, seen);
    res.on('close', () => {
      open.delete(res);
      if (!res.writableFinished) seen.closedBy ??= 'client';
    });
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    const onReceived = (): void => {
      if (seen.received) return;
      seen.received = true;
      seen.body = Buffer.concat(chunks).subarray(0, MAX_RECORDED_BODY).toString('utf8');
      settleWaiters();
    };
    req.on('close', onReceived);
    // the whole request first: a rule may match its body
    req.on('end', () => {
      onReceived();
      handle(req, res, seen, Buffer.concat(chunks));
    });
  });

  function handle(req: http.IncomingMessage, res: http.ServerResponse, seen: SeenRequest, body: Buffer): void {
    if (seen.url.startsWith(GONE_PREFIX)) {
      seen.action = 'gone';
      const status = Number(seen.url.slice(GONE_PREFIX.length).split(/[/?]/, 1)[0]) || 404;
      sendMadeUp(res, seen, {
        status,
        body: { error: { message: 'fault-proxy: this file is gone', type: 'not_found_error', param: null, code: 'result_not_found' } },
      });
      return;
    }
    const fault = faultFor(seen);
    if (!forwards(fault)) {
      answerFault(req, res, seen, fault);
    } else if (target === undefined) {
      seen.targetError = 'no target set';
      sendMadeUp(res, seen, {
        status: 502,
        body: { error: { message: 'fault-proxy: no target set', type: 'upstream_error', param: null, code: 'upstream_error' } },
      });
    } else {
      forwardRequest({ req, res, seen, body }, { target, agent }, fault);
    }
  }
  server.keepAliveTimeout = 60_000;
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  let down = false;
  async function listen(port: number): Promise<number> {
    server.listen(port, '127.0.0.1');
    await Promise.race([
      once(server, 'listening'),
      once(server, 'error').then(([err]) => {
        throw err;
      }),
    ]);
    return (server.address() as AddressInfo).port;
  }
  async function goDown(): Promise<void> {
    const closed = once(server, 'close');
    server.close();
    for (const seen of open.values()) seen.closedBy ??= 'proxy';
    for (const s of sockets) s.destroy();
    await closed;
  }

  const port = await listen(0);
  const proxy: FaultProxy = {
    url: `http://127.0.0.1:${port}`,
    port,
    get target() {
      return target?.origin ?? '';
    },
    setTarget(url) {
      target = new URL(url);
    },
    requests: [],
    addRule(spec) {
      const state: RuleState = { spec, matched: 0, applied: 0, removed: false };
      rules.push(state);
      return {
        spec,
        get matched() {
          return state.matched;
        },
        get applied() {
          return state.applied;
        },
        remove: () => {
          state.removed = true;
        },
      };
    },
    clearRules() {
      for (const r of rules) r.removed = true;
      rules = [];
    },
    async setDown(wantDown) {
      if (wantDown === down) return;
      down = wantDown;
      if (wantDown) await goDown();
      else await listen(port);
    },
    waitForRequest(match, count = 1) {
      return new Promise((resolve) => {
        waiters.push({ match, count, resolve });
        settleWaiters();
      });
    },
    goneUrl: (status = 404, name = 'result.mp4') => `http://127.0.0.1:${port}${GONE_PREFIX}${status}/${encodeURIComponent(name)}`,
    async close() {
      if (!down) {
        down = true;
        await goDown();
      }
      agent.destroy();
    },
  };
  return proxy;
}
