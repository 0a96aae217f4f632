import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import type { FsBlobStore } from '../media/blob-store.js';
import type { ResultUrlSigner } from '../media/signed-url.js';

const CONTENT_TYPES: Record<string, string> = {
  '.png': 'image/png', '.jpg': 'image/jpeg', '.jpeg': 'image/jpeg', '.webp': 'image/webp',
  '.mp4': 'video/mp4', '.mp3': 'audio/mpeg', '.wav': 'audio/wav',
};

interface FileParams { taskId: string; name: string }
interface FileQuery { exp?: string; sig?: string }

/** `bytes=a-b` | `bytes=a-` | `bytes=-n` -> an inclusive range inside `size`, 'unsatisfiable', or null (serve whole). */
export function parseRange(header: string | undefined, size: number): { start: number; end: number } | 'unsatisfiable' | null {
  if (!header) return null;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return null; // multi-range or malformed: serve the whole file
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (suffix === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (start >= size || end < start) return 'unsatisfiable';
  return { start, end };
}

/**
 * Result downloads: `GET|HEAD /files/{taskId}/{name}?exp&sig`. The signature is the credential
 * (no bearer key: the URL is handed to browsers and download tools); Range requests are served.
 */
export function registerFileRoutes(app: FastifyInstance, signer: ResultUrlSigner, blobs: FsBlobStore): void {
  const handler = async (request: FastifyRequest<{ Params: FileParams; Querystring: FileQuery }>, reply: FastifyReply) => {
    const { taskId, name } = request.params;
    const verdict = signer.verify(taskId, name, request.query.exp, request.query.sig);
    if (verdict === 'invalid') throw new AppError('result_link_invalid', 'This download link is not valid (altered or not issued by this gateway)');
    if (verdict === 'expired') throw new AppError('result_link_expired', 'This download link has expired; results are kept only for the family retention period');
    let file: string;
    let size: number;
    try {
      file = blobs.pathOf(taskId, name);
      size = (await fs.promises.stat(file)).size;
    } catch {
      throw new AppError('result_not_found', 'The result file no longer exists');
    }
    const type = CONTENT_TYPES[path.extname(name).toLowerCase()] ?? 'application/octet-stream';
    void reply.header('content-type', type).header('accept-ranges', 'bytes')
      .header('cache-control', 'private, max-age=3600').header('x-content-type-options', 'nosniff');
    const range = parseRange(request.headers.range, size);
    if (range === 'unsatisfiable') {
      return reply.status(416).header('content-range', `bytes */${size}`).send();
    }
    const { start, end } = range ?? { start: 0, end: size - 1 };
    if (range) void reply.status(206).header('content-range', `bytes ${start}-${end}/${size}`);
    void reply.header('content-length', String(size === 0 ? 0 : end - start + 1));
    if (request.method === 'HEAD' || size === 0) return reply.send();
    return reply.send(fs.createReadStream(file, { start, end }));
  };
  app.route<{ Params: FileParams; Querystring: FileQuery }>({
    method: ['GET', 'HEAD'], url: '/files/:taskId/:name', schema: { hide: true }, exposeHeadRoute: false, handler,
  });
}
