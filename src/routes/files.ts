import path from 'node:path';
import { Type } from '../typebox.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { NoBody, responses, type SuccessSchema } from '../contract/responses.js';
import { AppError } from '../errors.js';
import { answerFileRequest, validatorsOf } from '../http/conditional-get.js';
import { type BlobStore, isSafeBlobPath } from '../media/blob-store.js';
import { contentTypeOfExtension } from '../media/formats.js';
import type { ResultUrlSigner, SignedScope } from '../media/signed-url.js';
import { sniffMediaType } from '../media/sniff.js';

interface FileParams {
  taskId: string;
  name: string;
}
interface FileQuery {
  exp?: string;
  sig?: string;
}

export interface FileRouteOptions {
  /** Result files, served at `/files`. */
  results: BlobStore;
  /** The tasks' copies of caller media, served to upstreams at `/inputs` (G92). */
  inputs?: BlobStore;
  /** G173: a GET of `/files` answers a redirect to a presigned URL of the bucket rather than the bytes (needs `results.presign`). */
  redirect?: boolean;
}

const notFound = (): AppError => new AppError('result_not_found', 'The result file no longer exists');

/** How long the bytes of a result may be kept by the client. */
const CACHE_CONTROL = 'private, max-age=3600';

/**
 * Result downloads: `GET|HEAD /files/{taskId}/{name}?exp&sig`. The signature is the credential
 * (no bearer key: the URL is handed to browsers and download tools). Files stream from the
 * storage (a folder or the bucket) with a strong ETag, Last-Modified, If-Match / If-None-Match /
 * If-Modified-Since / If-Unmodified-Since (412 / 304), If-Range and one byte range per request
 * (G1, G172); or, in redirect mode, a GET is sent to a presigned bucket URL (G173).
 */
export function registerFileRoutes(app: FastifyInstance, signer: ResultUrlSigner, options: FileRouteOptions): void {
  const { results, inputs, redirect = false } = options;
  if (redirect && !results.presign) throw new Error(`MEDIAGATE_FILES_REDIRECT needs a storage that presigns URLs; ${results.location} does not`);
  registerSignedFiles(app, signer, 'files', results, redirect, async (_store, _taskId, name) => contentTypeOfExtension(path.extname(name)));
  // A task's copies of caller media, for an upstream to fetch (G92): stored without an extension,
  // so their type is read from their first bytes. Always streamed: an upstream's client may not
  // follow redirects, nor send a HEAD to a URL presigned for GET.
  if (inputs) registerSignedFiles(app, signer, 'inputs', inputs, false, sniffStoredType);
}

/** The type of a stored file from its first bytes. */
async function sniffStoredType(store: BlobStore, folder: string, name: string): Promise<string | undefined> {
  const stream = await store.read(folder, name, { start: 0, end: 511 });
  if (!stream) return undefined;
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return sniffMediaType(Buffer.concat(chunks)) ?? undefined;
}

/**
 * What the document says of a file route (G240). Path parameters only: the signature (`exp`,
 * `sig`) is checked by the handler, as before, not by a querystring schema.
 */
function fileSchema(scope: SignedScope, redirect: boolean): Record<string, unknown> {
  const bytes = { schema: Type.String({ format: 'binary' }) };
  const redirects: Record<number, SuccessSchema> =
    redirect && scope === 'files' ? { 302: NoBody('Redirect (MEDIAGATE_FILES_REDIRECT) to a presigned URL of the bucket, same expiry') } : {};
  return {
    tags: ['files'],
    summary:
      scope === 'files'
        ? 'Download a result file (the signed URL of a query reply: `?exp&sig`); ranges and conditional requests'
        : "A task's copy of a caller medium, for an upstream to fetch (signed URL `?exp&sig`, G92)",
    security: [],
    params: Type.Object({ taskId: Type.String(), name: Type.String() }),
    response: responses(
      {
        200: { description: 'The file (its media type: image/png, video/mp4, ...)', content: { '*/*': bytes } },
        206: { description: 'One byte range of the file', content: { '*/*': bytes } },
        ...redirects,
        304: NoBody('Not modified (If-None-Match / If-Modified-Since)'),
        412: NoBody('A precondition failed (If-Match / If-Unmodified-Since)'),
        416: NoBody('The range is not satisfiable'),
      },
      [403, 404, 414, 500, 503],
    ),
  };
}

type TypeOf = (store: BlobStore, folder: string, name: string) => Promise<string | undefined>;

function registerSignedFiles(app: FastifyInstance, signer: ResultUrlSigner, scope: SignedScope, store: BlobStore, redirect: boolean, typeOf: TypeOf): void {
  const handler = async (request: FastifyRequest<{ Params: FileParams; Querystring: FileQuery }>, reply: FastifyReply) => {
    const { taskId, name } = request.params;
    const verdict = signer.verify(taskId, name, request.query.exp, request.query.sig, Date.now(), scope);
    if (verdict === 'invalid') throw new AppError('result_link_invalid', 'This download link is not valid (altered or not issued by this gateway)');
    if (verdict === 'expired')
      throw new AppError('result_link_expired', 'This download link has expired; results are kept only for the family retention period');
    if (!isSafeBlobPath(taskId, name)) throw notFound();
    const info = await store.stat(taskId, name);
    if (!info) throw notFound();
    if (redirect && request.method === 'GET') {
      // the same expiry as the signed link; the bucket answers ranges and conditions itself
      const contentType = (await typeOf(store, taskId, name)) ?? 'application/octet-stream';
      const location = await store.presign!(taskId, name, Number(request.query.exp) * 1000, contentType);
      return reply.status(302).header('location', location).header('cache-control', 'no-store').send();
    }
    const v = validatorsOf(info);
    const answer = answerFileRequest(request.method, request.headers, v);
    const withBody = answer.status === 200 || answer.status === 206;
    // every read happens before the first header is set, so a file removed meanwhile is a clean 404
    const contentType = withBody ? ((await typeOf(store, taskId, name)) ?? 'application/octet-stream') : undefined;
    const stream = withBody && request.method === 'GET' ? await store.read(taskId, name, answer.status === 206 ? answer.range : undefined) : undefined;
    if (withBody && request.method === 'GET' && !stream) throw notFound();
    void reply.status(answer.status).header('accept-ranges', 'bytes').header('x-content-type-options', 'nosniff');
    if (answer.status === 412) return reply.send();
    if (answer.status === 416) return reply.header('content-range', `bytes */${v.size}`).send();
    void reply.header('etag', v.etag).header('cache-control', CACHE_CONTROL).header('last-modified', v.lastModified);
    if (answer.status === 304) return reply.send();
    const length = answer.status === 206 ? answer.range.end - answer.range.start + 1 : v.size;
    void reply.header('content-type', contentType!).header('content-length', String(length));
    if (answer.status === 206) void reply.header('content-range', `bytes ${answer.range.start}-${answer.range.end}/${v.size}`);
    if (!stream) return reply.send(); // HEAD
    return reply.send(stream);
  };
  app.route<{ Params: FileParams; Querystring: FileQuery }>({
    method: ['GET', 'HEAD'],
    url: `/${scope}/:taskId/:name`,
    schema: fileSchema(scope, redirect),
    exposeHeadRoute: false,
    handler,
  });
}
