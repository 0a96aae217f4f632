/**
 * Serves the built web console (console/dist, made by `npm run build`) at `/console/` (G360, G364):
 * files read once at start, `index.html` for `/console/` and any path without a file (the app
 * routes in the URL's fragment), hashed assets cached for a year, every answer under a strict
 * Content-Security-Policy (no inline script, G365). `/` redirects to the console, under the
 * public URL's path prefix. The HTML uses relative asset URLs, so the console works behind a
 * proxy that serves the gateway under a path.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply } from 'fastify';

/** Where `npm run build` writes the console (relative to this file in src/ and in dist/). */
export const CONSOLE_DIST = fileURLToPath(new URL('../../console/dist/', import.meta.url));

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

interface ServedFile {
  body: Buffer;
  type: string;
  immutable: boolean;
}

function readTree(dir: string, base = dir, out = new Map<string, ServedFile>()): Map<string, ServedFile> {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) readTree(full, base, out);
    else {
      const rel = path.relative(base, full).split(path.sep).join('/');
      out.set(rel, { body: fs.readFileSync(full), type: TYPES[path.extname(entry.name)] ?? 'application/octet-stream', immutable: rel.startsWith('assets/') });
    }
  }
  return out;
}

/**
 * The console's Content-Security-Policy (G365): scripts, styles and connections from the gateway
 * only; results and uploads shown from the gateway (or, with MEDIAGATE_FILES_REDIRECT, from the
 * bucket's https URLs) and as blob: previews of dropped files.
 */
export function consolePolicy(publicUrl: string, filesRedirect: boolean): string {
  const origin = new URL(publicUrl).origin;
  const media = ["'self'", 'blob:', 'data:', origin, ...(filesRedirect ? ['https:'] : [])].join(' ');
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    `img-src ${media}`,
    `media-src ${media}`,
    "connect-src 'self'",
    "font-src 'self'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "manifest-src 'self'",
  ].join('; ');
}

export interface ConsoleStaticOptions {
  dir: string;
  publicUrl: string;
  filesRedirect: boolean;
}

export function registerConsoleStatic(app: FastifyInstance, options: ConsoleStaticOptions): void {
  const files = fs.existsSync(path.join(options.dir, 'index.html')) ? readTree(options.dir) : undefined;
  const policy = consolePolicy(options.publicUrl, options.filesRedirect);
  const prefix = new URL(options.publicUrl).pathname.replace(/\/+$/, '');
  const security = (reply: FastifyReply): FastifyReply =>
    reply
      .header('content-security-policy', policy)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .header('x-frame-options', 'DENY');

  const send = (reply: FastifyReply, file: ServedFile): FastifyReply =>
    security(reply)
      .header('cache-control', file.immutable ? 'public, max-age=31536000, immutable' : 'no-cache')
      .type(file.type)
      .send(file.body);

  const serve = async (rel: string, reply: FastifyReply): Promise<FastifyReply> => {
    if (!files) {
      return security(reply)
        .code(503)
        .type('text/plain; charset=utf-8')
        .send('The web console is not built: run `npm run build` (needs the dev dependencies), then restart the gateway.\n');
    }
    const file = files.get(rel);
    if (file) return send(reply, file);
    if (rel.startsWith('assets/') || path.extname(rel) !== '') {
      return security(reply).code(404).type('text/plain; charset=utf-8').send('Not found\n');
    }
    return send(reply, files.get('index.html')!);
  };

  const hide = { hide: true };
  app.get('/', { schema: hide }, async (_request, reply) => reply.redirect(`${prefix}/console/`, 302));
  app.get('/console', { schema: hide }, async (_request, reply) => reply.redirect(`${prefix}/console/`, 301));
  app.get('/console/', { schema: hide }, async (_request, reply) => serve('index.html', reply));
  app.get<{ Params: { '*': string } }>('/console/*', { schema: hide }, async (request, reply) => serve(request.params['*'], reply));
}
