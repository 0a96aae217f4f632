/**
 * One webhook POST (G211): the receiver's host resolved here and every address vetted by the
 * caller-URL rule (unless MEDIAGATE_ALLOW_PRIVATE_URLS), the socket pinned to the vetted addresses
 * (no second DNS answer can point it elsewhere), connect and answer within one time bound, at most
 * {@link EXCERPT_BYTES} of a failed answer read (kept as an excerpt; a 2xx status line delivers,
 * whatever its body does), and no redirect followed.
 */
import { promises as dns } from 'node:dns';
import { undici } from '../http/undici.js';
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
  /** Why an attempt failed: a non-2xx answer, no answer in time, an address refused by policy (given up at once), a connection fault. */
  failure?: 'status' | 'timeout' | 'refused' | 'network';
}

const defaultLookup = async (hostname: string): Promise<ResolvedAddress[]> => dns.lookup(hostname, { all: true, verbatim: true });

/** POSTs `body` with `headers` to `url`; never throws: a failure is a result with its reason. */
export async function postWebhook(url: string, headers: Record<string, string>, body: string, opts: PostOptions): Promise<PostResult> {
  const bounded = deadline(new AbortController().signal, opts.timeoutMs);
  const vetted = new Map<string, ResolvedAddress[]>();
  const { Agent, request } = undici();
  const agent = new Agent({ connect: { timeout: opts.timeoutMs, lookup: vettedLookup(vetted) }, maxRedirections: 0 });
  try {
    const target = new URL(url);
    const refusal = await vet(target, vetted, opts, bounded.signal);
    if (refusal) return { statusCode: null, ...refusal };
    const res = await request(target, { dispatcher: agent, method: 'POST', headers, body, signal: bounded.signal });
    const code = res.statusCode;
    if (code >= 200 && code <= 299) {
      // the status line is the answer: a body that is slow to come (or never ends) does not undo it
      res.body.on('error', () => undefined); // destroying a body nothing reads emits an abort error
      res.body.destroy();
      return { statusCode: code, error: null };
    }
    const excerpt = await readExcerpt(res.body);
    const why = code >= 300 && code <= 399 ? `HTTP ${code} (redirects are not followed)` : `HTTP ${code}`;
    return { statusCode: code, error: excerpt === '' ? why : `${why}: ${excerpt}`, failure: 'status' };
  } catch (err) {
    if (bounded.signal.aborted) return { statusCode: null, error: `no answer within ${Math.round(opts.timeoutMs / 100) / 10} s`, failure: 'timeout' };
    // node's own message names the addresses the host resolved to: only the code is kept (G275)
    const e = err as NodeJS.ErrnoException & { cause?: NodeJS.ErrnoException };
    const code = e.code ?? e.cause?.code;
    return { statusCode: null, error: networkReason(code), failure: 'network' };
  } finally {
    bounded.release();
    agent.destroy().catch(() => undefined);
  }
}

/** What the delivery's attempt records when the address rule refuses the receiver: nothing of what it resolved to (G275). */
export const ADDRESS_NOT_ALLOWED = 'address not allowed';

/**
 * Resolves and vets the host; why no POST goes out (a refusal by the address rule: given up at once,
 * G275; a name that does not resolve: tried again), or undefined when every address may be reached.
 */
async function vet(
  url: URL,
  vetted: Map<string, ResolvedAddress[]>,
  opts: PostOptions,
  signal: AbortSignal,
): Promise<Pick<PostResult, 'error' | 'failure'> | undefined> {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const literal = parseHostLiteral(url.hostname);
  const addresses = literal ? [{ address: literal.address, family: literal.family }] : await withSignal((opts.lookup ?? defaultLookup)(host), signal);
  if (addresses.length === 0) return { error: 'the host name does not resolve', failure: 'network' };
  if (!opts.allowPrivate && addresses.some((a) => classifyAddress(a.address) !== 'public')) return { error: ADDRESS_NOT_ALLOWED, failure: 'refused' };
  vetted.set(host.toLowerCase(), addresses);
  return undefined;
}

/** A connection fault in words, by its code only. */
function networkReason(code: string | undefined): string {
  switch (code) {
    case 'ENOTFOUND':
    case 'EAI_NONAME':
    case 'ENODATA':
      return 'the host name does not resolve';
    case 'EAI_AGAIN':
      return 'the host name could not be resolved now (EAI_AGAIN)';
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ECONNRESET':
    case 'UND_ERR_SOCKET':
      return 'connection reset';
    case 'UND_ERR_CONNECT_TIMEOUT':
      return 'could not connect in time';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'host unreachable';
    case undefined:
      return 'network error';
    default:
      return /CERT|SSL|TLS|SELF_SIGNED|HOSTNAME_MISMATCH/.test(code) ? `TLS error (${code})` : `network error (${code})`;
  }
}

function withSignal<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/**
 * The first {@link EXCERPT_BYTES} of an answer as printable text; the rest is not read. Never
 * throws: an answer cut short (the attempt's time bound, a reset) keeps what came of it, so the
 * attempt records the status that did come.
 */
async function readExcerpt(body: AsyncIterable<Buffer> & { destroy(): unknown }): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= EXCERPT_BYTES) break; // leaving the loop destroys the stream
    }
  } catch {
    // the body ended early: the excerpt is what came
  }
  body.destroy();
  return Buffer.concat(chunks)
    .subarray(0, EXCERPT_BYTES)
    .toString('utf8')
    .replace(/\p{Cc}+/gu, ' ')
    .trim();
}
