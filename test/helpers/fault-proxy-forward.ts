/**
 * What the fault proxy (fault-proxy.ts) does to one request: the faults it can answer with, and
 * forwarding to the target (plain and streaming, then cut, or with the JSON answer rewritten).
 */
import http from 'node:http';
import type { SeenRequest } from './fault-proxy.js';

/** Answer `status` without forwarding; `retryAfter` (seconds) sets `Retry-After`. */
export interface StatusFault {
  status: number;
  /** A string is sent as is (text/plain unless `headers` say otherwise); anything else as JSON. Default: an `{"error": ...}` body. */
  body?: unknown;
  headers?: Record<string, string>;
  retryAfter?: number;
}

export interface RewriteContext {
  method: string;
  url: string;
  /** The target's status. */
  status: number;
}

/**
 * - `StatusFault`: an answer made up by the proxy (500, 503, 429 with Retry-After, ...);
 * - `'reset'`: the request is read, then the connection reset (TCP RST), no answer;
 * - `'hang'`: the request is read and never answered (released by `setDown(true)` or `close()`);
 * - `'malformed'`: 200 `application/json` whose body is not JSON;
 * - `{ forwardThen: 'reset' }`: forwarded (the target really acts) and its whole answer read, then
 *   the client's connection is reset: "the upstream accepted but we never heard";
 * - `{ forwardThen: 'hang' }`: the same, but the answer is held back until the client gives up:
 *   "the upstream accepted, its answer came too late";
 * - `{ rewriteJson }`: forwarded, and a JSON answer replaced by what the function returns
 *   (`undefined`: unchanged; answers that are not JSON pass unchanged).
 */
export type Fault =
  | StatusFault
  | 'reset'
  | 'hang'
  | 'malformed'
  | { forwardThen: 'reset' | 'hang' }
  | { rewriteJson: (json: unknown, ctx: RewriteContext) => unknown };

export type FaultKind = 'status' | 'reset' | 'hang' | 'malformed' | 'forward-then-reset' | 'forward-then-hang' | 'rewrite-json';

/** Headers of one connection, never passed on (RFC 9110 7.6.1), plus those named in `Connection`. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

export function endToEndHeaders(headers: http.IncomingHttpHeaders): http.OutgoingHttpHeaders {
  const named = new Set(
    String(headers.connection ?? '')
      .split(',')
      .map((h) => h.trim().toLowerCase()),
  );
  const out: http.OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !HOP_BY_HOP.has(name) && !named.has(name)) out[name] = value;
  }
  return out;
}

function errorType(status: number): string {
  if (status === 429) return 'rate_limit_error';
  return status >= 500 ? 'server_error' : 'invalid_request_error';
}

/** One request the proxy read whole, its answer, and its record. */
export interface Exchange {
  req: http.IncomingMessage;
  res: http.ServerResponse;
  seen: SeenRequest;
  body: Buffer;
}

/** Resets the client's connection (TCP RST): no answer, or none complete. */
function cut(seen: SeenRequest, req: http.IncomingMessage): void {
  seen.closedBy ??= 'proxy';
  req.socket.resetAndDestroy();
}

function send(res: http.ServerResponse, seen: SeenRequest, status: number, headers: Record<string, string>, body: string): void {
  seen.status = status;
  res.writeHead(status, { ...headers, 'content-length': String(Buffer.byteLength(body)) }).end(body);
}

/** Sends a JSON body (or a string as text) of the proxy's own. */
export function sendMadeUp(res: http.ServerResponse, seen: SeenRequest, fault: StatusFault): void {
  const status = fault.status;
  const given = fault.body ?? {
    error: {
      message: `fault-proxy: injected HTTP ${status}`,
      type: errorType(status),
      param: null,
      code: status === 429 ? 'rate_limited' : `injected_${status}`,
    },
  };
  const body = typeof given === 'string' ? given : JSON.stringify(given);
  const headers: Record<string, string> = { 'content-type': typeof given === 'string' ? 'text/plain; charset=utf-8' : 'application/json' };
  if (fault.retryAfter !== undefined) headers['retry-after'] = String(fault.retryAfter);
  send(res, seen, status, { ...headers, ...fault.headers }, body);
}

/** Answers a fault that does not forward (status, reset, hang, malformed). */
export function answerFault(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  seen: SeenRequest,
  fault: Exclude<Fault, { forwardThen: unknown } | { rewriteJson: unknown }>,
): void {
  if (fault === 'reset') {
    seen.action = 'reset';
    cut(seen, req);
  } else if (fault === 'hang') {
    seen.action = 'hang';
  } else if (fault === 'malformed') {
    seen.action = 'malformed';
    send(res, seen, 200, { 'content-type': 'application/json' }, '{"id": "task_fault", "status": "process');
  } else {
    seen.action = 'status';
    sendMadeUp(res, seen, fault);
  }
}

export interface ForwardTo {
  target: URL;
  agent: http.Agent;
}

const MAX_RECORDED_ANSWER = 1 << 20;

/** Forwards to the target; `fault` (forwardThen or rewriteJson) changes what the client gets. */
export function forwardRequest({ req, res, seen, body }: Exchange, to: ForwardTo, fault: Fault | undefined): void {
  const rewrite = typeof fault === 'object' && 'rewriteJson' in fault ? fault.rewriteJson : undefined;
  const then = typeof fault === 'object' && 'forwardThen' in fault ? fault.forwardThen : undefined;
  if (rewrite) seen.action = 'rewrite-json';
  if (then) seen.action = `forward-then-${then}`;

  const upstream = http.request({
    protocol: to.target.protocol,
    hostname: to.target.hostname,
    port: to.target.port,
    agent: to.agent,
    method: req.method,
    path: req.url,
    headers: { ...endToEndHeaders(req.headers), host: to.target.host },
  });
  res.on('close', () => {
    if (!res.writableFinished) upstream.destroy();
  });
  upstream.on('error', (err) => {
    if (res.destroyed) return;
    if (seen.targetStatus !== undefined || res.headersSent) {
      cut(seen, req);
      return;
    }
    seen.targetError = err.message;
    sendMadeUp(res, seen, {
      status: 502,
      body: { error: { message: `fault-proxy: the target could not be reached: ${err.message}`, type: 'upstream_error', param: null, code: 'upstream_error' } },
    });
  });
  upstream.on('response', (answer) => {
    const status = answer.statusCode ?? 502;
    seen.targetStatus = status;
    seen.targetHeaders = answer.headers;
    // the answer as text once it ended (a rewrite needs all of it; the record keeps the first MiB)
    const parts: Buffer[] = [];
    let size = 0;
    let text = '';
    answer.on('data', (c: Buffer) => {
      if (rewrite || size < MAX_RECORDED_ANSWER) parts.push(c);
      size += c.length;
    });
    answer.once('end', () => {
      text = Buffer.concat(parts).toString('utf8');
      seen.response = text.length > MAX_RECORDED_ANSWER ? text.slice(0, MAX_RECORDED_ANSWER) : text;
    });
    answer.on('close', () => {
      if (!answer.complete && !res.destroyed) cut(seen, req);
    });
    if (then === 'reset') answer.once('end', () => cut(seen, req));
    if (then) return; // a held answer is read and never sent
    if (rewrite && /\bjson\b/i.test(String(answer.headers['content-type'] ?? ''))) {
      answer.once('end', () => {
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        // A rewrite that throws is the test's bug: it surfaces as an uncaught error, never as a pass.
        const rewritten = json === undefined ? undefined : rewrite(json, { method: seen.method, url: seen.url, status });
        const out = rewritten === undefined ? text : JSON.stringify(rewritten);
        const headers = endToEndHeaders(answer.headers);
        delete headers['content-length'];
        seen.status = status;
        res.writeHead(status, { ...headers, 'content-length': Buffer.byteLength(out) }).end(out);
      });
      return;
    }
    seen.status = status;
    res.writeHead(status, endToEndHeaders(answer.headers));
    res.flushHeaders();
    answer.pipe(res);
  });
  upstream.end(body);
}
