import fs, { type Stats } from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import send from '@fastify/send';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import type { FsBlobStore } from '../media/blob-store.js';
import { contentTypeOfExtension } from '../media/formats.js';
import type { ResultUrlSigner, SignedScope } from '../media/signed-url.js';
import { sniffMediaType } from '../media/sniff.js';


interface FileParams { taskId: string; name: string }
interface FileQuery { exp?: string; sig?: string }

/** The request fields @fastify/send reads besides the method; nothing else of the request reaches it. */
interface SendHeaders {
  range?: string;
  'if-range'?: string;
  'if-match'?: string;
  'if-none-match'?: string;
  'if-modified-since'?: string;
  'if-unmodified-since'?: string;
}

const INT_RANGE = /^(\d+)-(\d*)$/;
const SUFFIX_RANGE = /^-(\d+)$/;

/**
 * The Range field handed to send, or undefined to ignore the client's (RFC 9110 §14.2 lets a server
 * ignore Range, and ignore or reject an invalid ranges-specifier; this one ignores). Valid means the
 * `bytes` unit (any case, §14.1) and a list of `first-last`, `first-` or `-suffix` specs, empty list
 * elements allowed; any spec with last < first, a non-numeric or another form makes the whole field
 * invalid (§14.1.1). Positions compare as BigInt, so long numerals cannot overflow. A suffix longer
 * than the file becomes `0-` (§14.1.2: the entire representation is used; send would answer 416).
 * A zero-length file ignores Range (§14.2 allows it). Whether the specs are satisfiable, and how many
 * remain after overlapping ones are merged, is left to send: none satisfiable is 416, one is 206,
 * several are served whole (200), which §14.2 allows in place of multipart/byteranges.
 */
export function rangeForSend(field: string | undefined, size: number): string | undefined {
  if (field === undefined || size === 0) return undefined;
  const eq = field.indexOf('=');
  if (eq < 0 || field.slice(0, eq).toLowerCase() !== 'bytes') return undefined;
  const specs: string[] = [];
  for (const element of field.slice(eq + 1).split(',')) {
    const spec = element.replace(/^[ \t]+|[ \t]+$/g, '');
    if (spec === '') continue;
    const int = INT_RANGE.exec(spec);
    if (int) {
      if (int[2] !== '' && BigInt(int[2]!) < BigInt(int[1]!)) return undefined;
      specs.push(spec);
      continue;
    }
    const suffix = SUFFIX_RANGE.exec(spec);
    if (!suffix) return undefined;
    specs.push(BigInt(suffix[1]!) > BigInt(size) ? '0-' : spec);
  }
  return specs.length > 0 ? `bytes=${specs.join(',')}` : undefined;
}

/**
 * RFC 9110 §13.1.5: an entity tag holds only if it equals the current (strong) ETag, so a weak one
 * never does; a date only if it is exactly the Last-Modified time (the file is written once and never
 * changed in place, so that time is a strong validator, §8.8.2.2). Anything else does not hold.
 */
export function ifRangeHolds(field: string, etag: string, lastModified: string): boolean {
  const value = field.trim();
  if (value.startsWith('"') || value.startsWith('W/')) return value === etag;
  const date = Date.parse(value);
  return !Number.isNaN(date) && date === Date.parse(lastModified);
}

/**
 * If-Match compares strongly (RFC 9110 §13.1.1): a weak entry can never match, so only the strong
 * entries go to send (which would otherwise accept `W/"x"` for `"x"`); with none left, an empty tag
 * that matches nothing keeps the 412.
 */
function strongIfMatch(field: string): string {
  if (field.trim() === '*') return '*';
  const strong = field.split(',').map((t) => t.trim()).filter((t) => t.startsWith('"'));
  return strong.length > 0 ? strong.join(', ') : '""';
}

/**
 * A strong validator: the file's size and modification time in milliseconds, the pair send puts in
 * its ETag (`W/"<same>"`, against which it compares If-None-Match and If-Match, so the two must agree;
 * the tests pin it). send marks the tag weak since size and mtime need not change when a file is
 * rewritten; result files never are (each is written once under a name of its own and renamed into
 * place), so here the tag identifies the bytes and may be strong, which If-Range needs.
 */
function strongEtag(stat: Stats): string {
  return `"${stat.size.toString(16)}-${stat.mtime.getTime().toString(16)}"`;
}

/**
 * The request fields send is given. Not Cache-Control: send never answers 304 to `no-cache`, a
 * directive for caches (RFC 9111 §5.2.1.4) that does not change how an origin evaluates preconditions.
 */
function pick(request: FastifyRequest): SendHeaders {
  const out: SendHeaders = {};
  const h = request.headers;
  for (const name of ['range', 'if-range', 'if-none-match', 'if-modified-since', 'if-unmodified-since'] as const) {
    const v = h[name];
    if (typeof v === 'string') out[name] = v;
  }
  if (typeof h['if-match'] === 'string') {
    out['if-match'] = strongIfMatch(h['if-match']);
    delete out['if-unmodified-since']; // RFC 9110 §13.1.4: ignored when If-Match is present
  }
  // §14.2: Range is defined for GET only (a HEAD describes the whole file), and If-Range only with Range.
  if (request.method !== 'GET' || out.range === undefined) {
    delete out.range;
    delete out['if-range'];
  }
  return out;
}

const notFound = (): AppError => new AppError('result_not_found', 'The result file no longer exists');

/**
 * Result downloads: `GET|HEAD /files/{taskId}/{name}?exp&sig`. The signature is the credential
 * (no bearer key: the URL is handed to browsers and download tools). Files are served by
 * @fastify/send: strong ETag, Last-Modified, If-Match / If-None-Match / If-Modified-Since /
 * If-Unmodified-Since (412 / 304), If-Range and one byte range per request (docs/API.md G1).
 */
export function registerFileRoutes(app: FastifyInstance, signer: ResultUrlSigner, blobs: FsBlobStore, inputs?: FsBlobStore): void {
  registerSignedFiles(app, signer, 'files', blobs, (file) => contentTypeOfExtension(path.extname(file)));
  // A task's copies of caller media, for an upstream to fetch (G92): stored without an extension,
  // so their type is read from their first bytes.
  if (inputs) registerSignedFiles(app, signer, 'inputs', inputs, (file) => sniffMediaType(readHead(file)) ?? undefined);
}

/** The first bytes of a file, for sniffing its type. */
function readHead(file: string): Buffer {
  const fd = fs.openSync(file, 'r');
  try {
    const head = Buffer.alloc(512);
    return head.subarray(0, fs.readSync(fd, head, 0, head.length, 0));
  } finally {
    fs.closeSync(fd);
  }
}

function registerSignedFiles(app: FastifyInstance, signer: ResultUrlSigner, scope: SignedScope, blobs: FsBlobStore, typeOf: (file: string) => string | undefined): void {
  const handler = async (request: FastifyRequest<{ Params: FileParams; Querystring: FileQuery }>, reply: FastifyReply) => {
    const { taskId, name } = request.params;
    const verdict = signer.verify(taskId, name, request.query.exp, request.query.sig, Date.now(), scope);
    if (verdict === 'invalid') throw new AppError('result_link_invalid', 'This download link is not valid (altered or not issued by this gateway)');
    if (verdict === 'expired') throw new AppError('result_link_expired', 'This download link has expired; results are kept only for the family retention period');
    let file: string;
    try {
      file = blobs.pathOf(taskId, name); // the only path check: send gets this file's directory as root
    } catch {
      throw notFound();
    }
    const headers = pick(request);
    let etag = '';
    // send reads only `method` and `headers` of the request object it is given.
    const sent = await send({ method: request.method, headers } as unknown as Readable, `/${encodeURIComponent(path.basename(file))}`, {
      root: path.dirname(file), index: false, dotfiles: 'deny', extensions: false, cacheControl: false, contentType: false,
      onFile: (_file, stat) => {
        etag = strongEtag(stat);
        if (headers.range !== undefined && headers['if-range'] !== undefined
          && !ifRangeHolds(headers['if-range'], etag, stat.mtime.toUTCString())) {
          delete headers.range;
        }
        delete headers['if-range']; // decided here; send's own check is looser (any earlier date, weak tags)
        const range = rangeForSend(headers.range, stat.size);
        if (range === undefined) delete headers.range;
        else headers.range = range;
      },
    });
    const h = sent.headers;
    if (sent.type !== 'file') {
      sent.stream.destroy(); // send's HTML error page or redirect, never sent
      if (sent.type === 'error' && (sent.statusCode === 412 || sent.statusCode === 416)) {
        void reply.status(sent.statusCode).header('accept-ranges', 'bytes').header('x-content-type-options', 'nosniff');
        if (h['Content-Range']) void reply.header('content-range', h['Content-Range']); // 416: `bytes */<size>`
        return reply.send();
      }
      if (sent.type === 'error' && sent.statusCode >= 500) throw new AppError('internal_error', 'Internal server error', { cause: sent.metadata.error });
      throw notFound(); // missing (404), a directory (send would redirect), or anything else send refused
    }
    void reply.status(sent.statusCode).header('accept-ranges', 'bytes').header('x-content-type-options', 'nosniff')
      .header('etag', etag).header('cache-control', 'private, max-age=3600');
    if (h['Last-Modified']) void reply.header('last-modified', h['Last-Modified']);
    if (sent.statusCode === 304) {
      sent.stream.destroy();
      return reply.send();
    }
    void reply.header('content-type', typeOf(file) ?? 'application/octet-stream')
      .header('content-length', String(h['Content-Length']));
    if (h['Content-Range']) void reply.header('content-range', h['Content-Range']);
    if (request.method === 'HEAD') {
      sent.stream.destroy();
      return reply.send();
    }
    return reply.send(sent.stream);
  };
  app.route<{ Params: FileParams; Querystring: FileQuery }>({
    method: ['GET', 'HEAD'], url: `/${scope}/:taskId/:name`, schema: { hide: true }, exposeHeadRoute: false, handler,
  });
}
