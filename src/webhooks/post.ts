/**
 * One webhook POST (G211): the receiver's host resolved here and every address vetted by the
 * caller-URL rule (unless MEDIAGATE_ALLOW_PRIVATE_URLS), the socket pinned to the vetted addresses
 * (no second DNS answer can point it elsewhere), connect and answer within one time bound, at most
 * {@link EXCERPT_BYTES} of the answer read (kept as an excerpt), and no redirect followed.
 */
import { promises as dns } from 'node:dns';
import { Agent, request } from 'undici';
import { deadline } from '../deadline.js';
import { classifyAddress, parseHostLiteral } from '../media/address-policy.js';
import { type ResolvedAddress, vettedLookup } from '../media/safe-fetch.js';

/** The most of a receiver's answer read and kept. */
export const EXCERPT_BYTES = 512;

export interface PostOptions {
  /** Bound on the whole attempt: DNS, connect, sending and the answer's headers and excerpt. */
  timeoutMs: number;
  allowPrivate: boolean;
  /** Host name resolution (tests point names at chosen addresses). */
  lookup?: (hostname: string) => Promise<ResolvedAddress[]>;
}

export interface PostResult {
  statusCode: number | null;
  /** Null when delivered (2xx). */
  error: string | null;
  /** Why an attempt failed: a non-2xx answer, no answer in time, an address refused by policy, a connection fault. */
  failure?: 'status' | 'timeout' | 'refused' | 'network';
}

const defaultLookup = async (hostname: string): Promise<ResolvedAddress[]> => dns.lookup(hostname, { all: true, verbatim: true });

/** POSTs `body` with `headers` to `url`; never throws: a failure is a result with its reason. */
export async function postWebhook(url: string, headers: Record<string, string>, body: string, opts: PostOptions): Promise<PostResult> {
  const bounded = deadline(new AbortController().signal, opts.timeoutMs);
  const vetted = new Map<string, ResolvedAddress[]>();
  const agent = new Agent({ connect: { timeout: opts.timeoutMs, lookup: vettedLookup(vetted) }, maxRedirections: 0 });
  try {
    const target = new URL(url);
    const refusal = await vet(target, vetted, opts, bounded.signal);
    if (refusal) return { statusCode: null, error: refusal, failure: 'refused' };
    const res = await request(target, { dispatcher: agent, method: 'POST', headers, body, signal: bounded.signal });
    const excerpt = await readExcerpt(res.body);
    const code = res.statusCode;
    if (code >= 200 && code <= 299) return { statusCode: code, error: null };
    const why = code >= 300 && code <= 399 ? `HTTP ${code} (redirects are not followed)` : `HTTP ${code}`;
    return { statusCode: code, error: excerpt === '' ? why : `${why}: ${excerpt}`, failure: 'status' };
  } catch (err) {
    if (bounded.signal.aborted) return { statusCode: null, error: `no answer within ${Math.round(opts.timeoutMs / 100) / 10} s`, failure: 'timeout' };
    const e = err as NodeJS.ErrnoException & { cause?: NodeJS.ErrnoException };
    const code = e.code ?? e.cause?.code;
    return { statusCode: null, error: code ? `${code}: ${e.message}`.slice(0, 300) : e.message.slice(0, 300), failure: 'network' };
  } finally {
    bounded.release();
    agent.destroy().catch(() => undefined);
  }
}

/** Resolves and vets the host; a refusal's reason, or undefined when every address may be reached. */
async function vet(url: URL, vetted: Map<string, ResolvedAddress[]>, opts: PostOptions, signal: AbortSignal): Promise<string | undefined> {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const literal = parseHostLiteral(url.hostname);
  const addresses = literal ? [{ address: literal.address, family: literal.family }] : await withSignal((opts.lookup ?? defaultLookup)(host), signal);
  if (addresses.length === 0) return `${host} does not resolve`;
  if (!opts.allowPrivate) {
    const bad = addresses.find((a) => classifyAddress(a.address) !== 'public');
    if (bad) return `${host} resolves to a ${classifyAddress(bad.address)} address (${bad.address}); only public addresses are allowed`;
  }
  vetted.set(host.toLowerCase(), addresses);
  return undefined;
}

function withSignal<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** The first {@link EXCERPT_BYTES} of an answer as printable text; the rest is not read. */
async function readExcerpt(body: AsyncIterable<Buffer> & { destroy(): unknown }): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= EXCERPT_BYTES) break; // leaving the loop destroys the stream
  }
  body.destroy();
  return Buffer.concat(chunks).subarray(0, EXCERPT_BYTES).toString('utf8').replace(/\p{Cc}+/gu, ' ').trim();
}
