/**
 * The one fetcher for every caller-supplied media URL (SSRF-safe).
 *
 * - only http: and https:; every host name is resolved here and every resolved address must be
 *   public (unless `allowPrivate`);
 * - the socket connects to exactly the vetted addresses (an undici Agent whose `connect.lookup`
 *   answers from the vetted set and never asks DNS again), so DNS rebinding has no gap;
 * - redirects are followed by hand (at most {@link MAX_REDIRECTS}), each hop re-validated;
 * - connect timeout, total timeout, size cap (Content-Length up front and while streaming), and an
 *   optional content check. Every failure is an {@link AppError} whose `param` is the request field.
 * - the body goes to a sink as it arrives, with backpressure: {@link fetchMediaToFile} writes it to a
 *   file (what review uses: memory stays bounded whatever the size), {@link fetchMedia} collects it
 *   in memory (the task runner's fallback for media that were not reviewed). A failed or aborted
 *   fetch leaves no file behind.
 */
import { promises as dns } from 'node:dns';
import type { TcpNetConnectOpts } from 'node:net';
import { type Readable, Transform, type TransformCallback, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Agent } from 'undici';
import { undici } from '../http/undici.js';
import { deadline } from '../deadline.js';
import { AppError } from '../errors.js';
import { classifyAddress, parseHostLiteral } from './address-policy.js';
import { type BodySink, fileSink, memorySink } from './fetch-sink.js';
import { sniffMediaType } from './sniff.js';

/** Options of {@link fetchMedia}. */
export interface FetchMediaOptions {
  /** The request field the URL came from (`image_urls[2]`): the `param` and message prefix of errors. */
  field: string;
  /** Largest accepted body, checked against Content-Length up front and while streaming. */
  maxBytes: number;
  /** Lifts ONLY the public-address rule (MEDIAGATE_ALLOW_PRIVATE_URLS=1). */
  allowPrivate: boolean;
  /**
   * Origins (`scheme://host:port`) whose hops the public-address rule does not apply to: a
   * provider's own configured addresses (G270). Trust is per origin and per hop: a redirect from
   * one of them to any other origin is vetted like a caller's URL.
   */
  trustedOrigins?: readonly string[];
  /** Bound on the whole fetch, DNS and redirects included; default 15000. */
  timeoutMs?: number;
  /** Bound on each TCP/TLS connect; default 5000. */
  connectTimeoutMs?: number;
  /**
   * Content check, called once with the bare lower-case media type (no parameters, '' when absent)
   * and the first {@link SNIFF_BYTES} bytes (fewer if the body is shorter), as soon as they arrive.
   * Default: accept anything.
   */
  accept?: (contentType: string, firstBytes: Buffer) => boolean;
  /** Caller cancellation; when it fires, fetchMedia rejects with the signal's reason. */
  signal?: AbortSignal;
  /**
   * Called once the final (2xx) response's headers passed the size check, before its body is read,
   * with its Content-Length (undefined when it sends none). Media review lowers its byte reservation to it.
   */
  onLength?: (declared: number | undefined) => void;
  /**
   * Extra request headers (an upstream's credentials for its own result files), sent only to the
   * URL's own origin: a redirect elsewhere goes without them.
   */
  headers?: Record<string, string>;
}

/**
 * The `cause` of a `url_not_allowed` refusal by the address rule: the class of the address refused
 * and whether a redirect led there (callers that must not name addresses word their own message).
 */
export class AddressNotAllowed extends Error {
  constructor(
    readonly addressClass: string,
    readonly redirected: boolean,
  ) {
    super(`${redirected ? 'a redirect leads to' : 'the URL names'} a ${addressClass} address`);
    this.name = 'AddressNotAllowed';
  }
}

/** The HTTP status of a fetch that answered with one other than 2xx (the `cause` of its AppError). */
export class HttpStatusError extends Error {
  constructor(readonly status: number) {
    super(`HTTP ${status}`);
    this.name = 'HttpStatusError';
  }
}

/** A fetched media file, in memory. `finalUrl` is the URL after redirects. */
export interface FetchedMedia {
  bytes: Buffer;
  contentType: string;
  finalUrl: string;
}

/** A fetched media file on disk; the caller owns `path` (moves it away or removes it). */
export interface FetchedFile {
  path: string;
  /** Its size in bytes. */
  bytes: number;
  /** Its first {@link SNIFF_BYTES} bytes (fewer if it is shorter). */
  head: Buffer;
  contentType: string;
  finalUrl: string;
}

/** One resolved address, as `dns.promises.lookup(host, { all: true })` returns them. */
export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Replaceable collaborators of {@link fetchMediaWith} (tests inject fakes). */
export interface FetchMediaDeps {
  /** Resolves a host name to all its addresses; rejects with a DNS error (`code`) when it cannot. */
  lookup: (hostname: string) => Promise<ResolvedAddress[]>;
  /** The address rule, consulted unless `allowPrivate`; `hostname` is the name that resolved to it. */
  isAllowed: (address: string, hostname: string) => boolean;
}

/** Most redirects followed for one fetch. */
export const MAX_REDIRECTS = 3;
/** How many leading bytes `accept` is given. */
export const SNIFF_BYTES = 512;

const DEFAULT_TIMEOUT_MS = 15_000;
const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const NOT_FOUND_DNS_CODES = new Set(['ENOTFOUND', 'ENODATA', 'EAI_NONAME', 'EAI_NODATA', 'EAI_FAIL']);

const defaultDeps: FetchMediaDeps = {
  lookup: async (hostname) => dns.lookup(hostname, { all: true, verbatim: true }),
  isAllowed: (address) => classifyAddress(address) === 'public',
};

/**
 * Fetches a caller-supplied media URL under the SSRF and size rules described in this module.
 * Errors: `invalid_request` (not a URL), `url_not_allowed` (not http(s), or a non-public address
 * on any hop), `media_fetch_failed` (DNS, network, timeout, non-2xx, redirects, size, `accept`).
 * If `opts.signal` aborts, rejects with its reason instead.
 */
export async function fetchMedia(url: string, opts: FetchMediaOptions): Promise<FetchedMedia> {
  return fetchMediaWith(url, opts, defaultDeps);
}

/**
 * {@link fetchMedia}, writing the body to a new file in `opts.dir` as it arrives (the size cap and
 * the `accept` check applied on the way); the file is removed on any failure or abort.
 */
export async function fetchMediaToFile(url: string, opts: FetchMediaOptions & { dir: string }, deps: Partial<FetchMediaDeps> = {}): Promise<FetchedFile> {
  const { path, bytes, head, contentType, finalUrl } = await fetchInto(url, opts, deps, fileSink(opts.dir));
  return { path, bytes, head, contentType, finalUrl };
}

/**
 * The address rule alone, for a URL the gateway hands on without fetching it (chat media go to the
 * model provider as URLs): http(s) only, and the host resolves to public addresses only unless
 * `allowPrivate`. Same errors as {@link fetchMedia}: `url_not_allowed`, `media_fetch_failed` (does
 * not resolve, timed out).
 */
export async function vetMediaUrl(
  url: string,
  opts: { field: string; allowPrivate: boolean; timeoutMs?: number },
  deps: Partial<FetchMediaDeps> = {},
): Promise<void> {
  const current = parseCallerUrl(url, opts.field);
  if (opts.allowPrivate) return;
  const bounded = deadline(new AbortController().signal, opts.timeoutMs ?? 5000);
  const ctx: Ctx = {
    opts: { ...opts, maxBytes: 0 },
    deps: { ...defaultDeps, ...deps },
    original: describeUrl(current),
    origin: current.origin,
    timeoutSignal: bounded.signal,
    signal: bounded.signal,
    vetted: new Map(),
  };
  try {
    await vetHost(ctx, current, 0);
  } catch (err) {
    throw mapError(ctx, current, err);
  } finally {
    bounded.release();
  }
}

type LookupFn = NonNullable<TcpNetConnectOpts['lookup']>;

/** Per-fetch state shared by the hops. */
interface Ctx {
  opts: FetchMediaOptions;
  deps: FetchMediaDeps;
  original: string;
  /** The origin the extra headers may go to. */
  origin: string;
  /** Aborted at the fetch's time limit or by the caller's signal (errors ask the caller's first). */
  timeoutSignal: AbortSignal;
  signal: AbortSignal;
  /** Vetted addresses per host name: the only answers the connect-time lookup gives. */
  vetted: Map<string, ResolvedAddress[]>;
}

/**
 * {@link fetchMedia} with replaceable DNS lookup and address rule (missing deps use the defaults).
 * Internal: exported for tests.
 */
export async function fetchMediaWith(url: string, opts: FetchMediaOptions, deps: Partial<FetchMediaDeps> = {}): Promise<FetchedMedia> {
  const { bytes, contentType, finalUrl } = await fetchInto(url, opts, deps, memorySink());
  return { bytes, contentType, finalUrl };
}

/** What a hop answers with once the body is in the sink. */
type Received<T> = T & { head: Buffer; contentType: string; finalUrl: string };

async function fetchInto<T>(url: string, opts: FetchMediaOptions, deps: Partial<FetchMediaDeps>, sink: BodySink<T>): Promise<Received<T>> {
  let current = parseCallerUrl(url, opts.field);
  opts.signal?.throwIfAborted();

  // a cleared timer, not AbortSignal.timeout: that one keeps its timer, signals and listeners alive
  // for the whole bound (10 min for a result) after every fetch (G127)
  const bounded = deadline(opts.signal ?? new AbortController().signal, opts.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  const ctx: Ctx = {
    opts,
    deps: { ...defaultDeps, ...deps },
    original: describeUrl(current),
    origin: current.origin,
    timeoutSignal: bounded.signal,
    signal: bounded.signal,
    vetted: new Map(),
  };
  const agent = new (undici().Agent)({
    connect: { timeout: opts.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS, lookup: vettedLookup(ctx.vetted) },
    maxRedirections: 0,
  });
  try {
    for (let hop = 0; ; hop++) {
      await vetHost(ctx, current, hop);
      const next = await fetchHop(ctx, agent, current, hop, sink);
      if (next instanceof URL) {
        current = next;
        continue;
      }
      return next;
    }
  } catch (err) {
    throw mapError(ctx, current, err);
  } finally {
    bounded.release();
    agent.destroy().catch(() => undefined);
  }
}

/** A connect-time lookup that only ever answers with the addresses vetted for that host name. */
export function vettedLookup(vetted: Map<string, ResolvedAddress[]>): LookupFn {
  return (hostname, options, callback) => {
    const all = vetted.get(hostname.toLowerCase()) ?? [];
    const f = options.family;
    const family = f === 4 || f === 'IPv4' ? 4 : f === 6 || f === 'IPv6' ? 6 : 0;
    const usable = all.filter((a) => family === 0 || a.family === family);
    const first = usable[0];
    if (first === undefined) {
      const err: NodeJS.ErrnoException = new Error(`no vetted address for ${hostname}`);
      err.code = 'ENOTFOUND';
      callback(err, '', 0);
      return;
    }
    if (options.all === true)
      callback(
        null,
        usable.map((a) => ({ address: a.address, family: a.family })),
      );
    else callback(null, first.address, first.family);
  };
}

/** A caller's URL, parsed; 400 when it is not an absolute http(s) URL. */
function parseCallerUrl(url: string, field: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new AppError('invalid_request', `${field}: is not a valid absolute URL`, { param: field });
  }
  checkScheme(parsed, field, null);
  return parsed;
}

/** Refuses anything but http: and https:. `from` is the URL that redirected here, if any. */
function checkScheme(u: URL, field: string, from: string | null): void {
  if (u.protocol === 'http:' || u.protocol === 'https:') return;
  const scheme = u.protocol.replace(/:$/, '');
  const what = from === null ? `got a ${scheme}: URL` : `${from} redirects to a ${scheme}: URL`;
  throw new AppError('url_not_allowed', `${field}: only http and https URLs are allowed; ${what}`, { param: field });
}

/** Resolves the hop's host, applies the address rule, and records the vetted addresses. */
async function vetHost(ctx: Ctx, u: URL, hop: number): Promise<void> {
  const { field, allowPrivate } = ctx.opts;
  const host = u.hostname.startsWith('[') ? u.hostname.slice(1, -1) : u.hostname;
  const literal = parseHostLiteral(u.hostname);
  let addresses: ResolvedAddress[];
  if (literal !== null) {
    addresses = [{ address: literal.address, family: literal.family }];
  } else {
    addresses = await abortable(ctx.deps.lookup(host), ctx.signal);
    if (addresses.length === 0) {
      throw Object.assign(new Error(`no addresses for ${host}`), { code: 'ENOTFOUND' });
    }
  }
  if (!allowPrivate && !ctx.opts.trustedOrigins?.includes(u.origin)) {
    const bad = addresses.find((a) => !ctx.deps.isAllowed(a.address, host));
    if (bad !== undefined) {
      const cls = classifyAddress(bad.address);
      const label = cls === 'public' ? 'disallowed' : cls;
      const kind = `${/^[aeiou]/.test(label) ? 'an' : 'a'} ${label}`;
      const subject = hop === 0 ? describeUrl(u) : `${ctx.original} redirects to ${describeUrl(u)}, which`;
      throw new AppError('url_not_allowed', `${field}: ${subject} resolves to ${kind} address (${bad.address}); only public addresses are allowed`, {
        param: field,
        cause: new AddressNotAllowed(label, hop > 0),
      });
    }
  }
  ctx.vetted.set(host.toLowerCase(), addresses);
}

/** Performs one request; returns the next URL for a redirect, or the fetched media. */
async function fetchHop<T>(ctx: Ctx, agent: Agent, u: URL, hop: number, sink: BodySink<T>): Promise<URL | Received<T>> {
  const res = await undici().request(u, {
    dispatcher: agent,
    method: 'GET',
    signal: ctx.signal,
    headers: {
      ...(ctx.opts.headers && u.origin === ctx.origin && ctx.opts.headers),
      'user-agent': 'mediagate-media-fetcher',
      accept: '*/*',
      'accept-encoding': 'identity',
    },
  });
  const { statusCode, headers, body } = res;
  if (REDIRECT_STATUSES.has(statusCode)) {
    discard(body);
    const location = headerValue(headers.location);
    if (location === undefined) throw fetchFailed(ctx, u, `HTTP ${statusCode} without a Location header`, false);
    if (hop >= MAX_REDIRECTS) throw fetchFailed(ctx, u, `more than ${MAX_REDIRECTS} redirects`, false);
    let next: URL;
    try {
      next = new URL(location, u);
    } catch {
      throw fetchFailed(ctx, u, `HTTP ${statusCode} redirects to an invalid URL`, false);
    }
    checkScheme(next, ctx.opts.field, ctx.original);
    return next;
  }
  if (statusCode < 200 || statusCode > 299) {
    discard(body);
    throw fetchFailed(ctx, u, `HTTP ${statusCode}`, statusCode >= 500 || statusCode === 429 || statusCode === 408, new HttpStatusError(statusCode));
  }
  const { maxBytes, field } = ctx.opts;
  const declared = Number(headerValue(headers['content-length']) ?? Number.NaN);
  if (Number.isFinite(declared) && declared > maxBytes) {
    discard(body);
    throw tooLarge(ctx, u, `Content-Length ${declared} bytes exceeds the limit of ${maxBytes} bytes`);
  }
  const contentType = (headerValue(headers['content-type']) ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  ctx.opts.onLength?.(Number.isFinite(declared) ? declared : undefined);
  const meter = new BodyMeter(ctx, u, contentType);
  body.on('error', () => undefined); // pipeline reports it; a late one after a failure must not go unhandled
  let destination: Writable;
  try {
    destination = await sink.open();
  } catch (err) {
    body.destroy();
    throw err;
  }
  try {
    await pipeline(body, meter, destination);
    if (meter.total === 0) {
      throw new AppError('media_fetch_failed', `${field}: ${where(ctx, u)} returned an empty body`, { param: field });
    }
    meter.checkShortBody();
    return { ...(await sink.finish()), head: meter.head(), contentType, finalUrl: u.href };
  } catch (err) {
    body.destroy();
    await sink.discard();
    throw err;
  }
}

/**
 * Counts the body on its way to the sink: more than `maxBytes` fails at once, and the first
 * {@link SNIFF_BYTES} bytes go to `accept` as soon as they are here (before they are written).
 */
class BodyMeter extends Transform {
  total = 0;
  private readonly first: Buffer[] = [];
  private firstLength = 0;
  private checked = false;

  constructor(
    private readonly ctx: Ctx,
    private readonly u: URL,
    private readonly contentType: string,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.total += chunk.length;
    if (this.total > this.ctx.opts.maxBytes) {
      done(tooLarge(this.ctx, this.u, `more than the limit of ${this.ctx.opts.maxBytes} bytes`));
      return;
    }
    if (!this.checked) {
      this.first.push(chunk);
      this.firstLength += chunk.length;
      if (this.firstLength >= SNIFF_BYTES) {
        this.checked = true;
        try {
          checkAccept(this.ctx, this.u, this.contentType, this.head());
        } catch (err) {
          done(err as Error);
          return;
        }
      }
    }
    done(null, chunk);
  }

  /** The first bytes seen (at most {@link SNIFF_BYTES}). */
  head(): Buffer {
    return Buffer.concat(this.first).subarray(0, SNIFF_BYTES);
  }

  /** A body shorter than {@link SNIFF_BYTES} is checked once it has ended. */
  checkShortBody(): void {
    if (!this.checked) checkAccept(this.ctx, this.u, this.contentType, this.head());
  }
}

function checkAccept(ctx: Ctx, u: URL, contentType: string, first: Buffer): void {
  const { accept, field } = ctx.opts;
  if (accept === undefined || accept(contentType, first)) return;
  const sniffed = sniffMediaType(first);
  const detail = `Content-Type ${contentType === '' ? '(none)' : contentType}${sniffed ? `, content looks like ${sniffed}` : ''}`;
  throw new AppError('media_fetch_failed', `${field}: ${where(ctx, u)} is not an accepted kind of file (${detail})`, { param: field });
}

function tooLarge(ctx: Ctx, u: URL, detail: string): AppError {
  const { field } = ctx.opts;
  return new AppError('media_fetch_failed', `${field}: ${where(ctx, u)} is too large: ${detail}`, { param: field });
}

function fetchFailed(ctx: Ctx, u: URL, reason: string, retryable: boolean, cause?: unknown): AppError {
  const { field } = ctx.opts;
  return new AppError('media_fetch_failed', `${field}: could not fetch ${where(ctx, u)}: ${reason}`, {
    param: field,
    retryable,
    cause,
  });
}

/** The original URL for messages, plus the hop URL when a redirect led elsewhere. */
function where(ctx: Ctx, u: URL): string {
  const here = describeUrl(u);
  return here === ctx.original ? here : `${ctx.original} (redirected to ${here})`;
}

/** Turns whatever a hop threw into the AppError (or caller abort reason) fetchMedia rejects with. */
function mapError(ctx: Ctx, u: URL, err: unknown): unknown {
  if (err instanceof AppError) return err;
  if (ctx.opts.signal?.aborted === true) return ctx.opts.signal.reason;
  if (ctx.timeoutSignal.aborted) {
    const secs = (ctx.opts.timeoutMs ?? DEFAULT_TIMEOUT_MS) / 1000;
    return fetchFailed(ctx, u, `timed out after ${secs} s`, true);
  }
  const code = errorCode(err);
  if (code !== undefined && (NOT_FOUND_DNS_CODES.has(code) || code === 'EAI_AGAIN')) {
    const host = u.hostname;
    const reason = NOT_FOUND_DNS_CODES.has(code) ? `host name ${host} does not resolve` : `DNS lookup for ${host} failed (${code})`;
    return fetchFailed(ctx, u, reason, code === 'EAI_AGAIN', err);
  }
  return fetchFailed(ctx, u, networkReason(ctx, code), true, err);
}

function networkReason(ctx: Ctx, code: string | undefined): string {
  switch (code) {
    case 'UND_ERR_CONNECT_TIMEOUT':
      return `could not connect within ${(ctx.opts.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS) / 1000} s`;
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ECONNRESET':
    case 'UND_ERR_SOCKET':
      return 'connection reset';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'host unreachable';
    case undefined:
      return 'network error';
    default:
      if (/CERT|SSL|TLS|SELF_SIGNED|HOSTNAME_MISMATCH/.test(code)) return `TLS error (${code})`;
      return `network error (${code})`;
  }
}

function errorCode(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) {
    const code = (e as NodeJS.ErrnoException).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}

/** Drops a response body without reading it (undici emits an abort error on destroy: swallow it). */
function discard(body: Readable): void {
  body.on('error', () => undefined);
  body.destroy();
}

function headerValue(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

/** Rejects as soon as `signal` aborts (DNS lookups cannot be cancelled). */
async function abortable<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  signal.throwIfAborted();
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([p, aborted]);
  } finally {
    if (onAbort) signal.removeEventListener('abort', onAbort);
  }
}

/**
 * A URL as shown in error messages: scheme, host, port and path only. Credentials are dropped and
 * a query string (often a signature) is shown as `?…`; long URLs are shortened.
 */
function describeUrl(u: URL): string {
  const s = `${u.protocol}//${u.host}${u.pathname}${u.search ? '?…' : ''}`;
  return s.length > 200 ? `${s.slice(0, 199)}…` : s;
}
