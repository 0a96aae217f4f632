import fs from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AppError } from '../errors.js';
import { isPublicAddress } from './address-policy.js';
import { AddressNotAllowed, fetchMedia, fetchMediaToFile, fetchMediaWith, MAX_REDIRECTS, SNIFF_BYTES, type FetchMediaOptions } from './safe-fetch.js';
import { isImageBytes } from './sniff.js';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** A loopback HTTP server that counts requests (in total and per path). */
interface TestServer {
  port: number;
  hits: Map<string, number>;
  total: () => number;
  close: () => Promise<void>;
}

async function startServer(handler: Handler): Promise<TestServer> {
  const hits = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    hits.set(path, (hits.get(path) ?? 0) + 1);
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    hits,
    total: () => [...hits.values()].reduce((a, b) => a + b, 0),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const PNG = Buffer.concat([Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex'), Buffer.alloc(64, 1)]);

const BASE: FetchMediaOptions = { field: 'image_urls[0]', maxBytes: 1_000_000, allowPrivate: false, timeoutMs: 5_000 };
const PRIVATE_OK: FetchMediaOptions = { ...BASE, allowPrivate: true };

/** Runs `p`, expecting an AppError; returns it. */
async function appError(p: Promise<unknown>): Promise<AppError> {
  const err = await p.then(
    () => {
      throw new Error('expected the fetch to fail');
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AppError);
  return err as AppError;
}

let srv: TestServer;
const servers: TestServer[] = [];
async function server(handler: Handler): Promise<TestServer> {
  const s = await startServer(handler);
  servers.push(s);
  return s;
}

beforeEach(async () => {
  srv = await server((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const m = /^\/r\/(\d+)$/.exec(url.pathname);
    if (m && Number(m[1]) < 10) {
      res.writeHead(302, { location: `/r/${Number(m[1]) + 1}` }).end();
    } else if (url.pathname === '/to') {
      res.writeHead(302, { location: url.searchParams.get('u') ?? '/' }).end();
    } else if (url.pathname === '/html') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><p>hi</p>');
    } else if (url.pathname === '/missing.png') {
      res.writeHead(404).end('nope');
    } else if (url.pathname === '/boom') {
      res.writeHead(503).end();
    } else if (url.pathname === '/empty') {
      res.writeHead(200, { 'content-type': 'image/png' }).end();
    } else if (url.pathname === '/no-location') {
      res.writeHead(302).end();
    } else {
      res.writeHead(200, { 'content-type': 'image/png' }).end(PNG);
    }
  });
});

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

describe('fetchMedia: addresses', () => {
  const spellings = (port: number): string[] => [
    `http://2130706433:${port}/a.png`,
    `http://0x7f000001:${port}/a.png`,
    `http://0x7f.1:${port}/a.png`,
    `http://127.1:${port}/a.png`,
    `http://127.0.0.1:${port}/a.png`,
    `http://[::ffff:127.0.0.1]:${port}/a.png`,
    `http://[::ffff:7f00:1]:${port}/a.png`,
    `http://[::1]:${port}/a.png`,
    `http://localhost:${port}/a.png`,
    `http://0:${port}/a.png`,
  ];

  it('refuses every loopback spelling without sending a request', async () => {
    for (const url of spellings(srv.port)) {
      const err = await appError(fetchMedia(url, BASE));
      expect(err.code, url).toBe('url_not_allowed');
      expect(err.status).toBe(400);
      expect(err.param).toBe('image_urls[0]');
      expect(err.message).toMatch(/^image_urls\[0\]: http:\/\/.+ resolves to an? [a-z-]+ address \(.+\); only public addresses are allowed$/);
    }
    expect(srv.total()).toBe(0);
  });

  it('names the address and its kind', async () => {
    const err = await appError(fetchMedia(`http://127.0.0.1:${srv.port}/a.png`, BASE));
    expect(err.message).toBe(`image_urls[0]: http://127.0.0.1:${srv.port}/a.png resolves to a loopback address (127.0.0.1); only public addresses are allowed`);
  });

  it('fetches the same server when allowPrivate is set', async () => {
    const reachable = spellings(srv.port).filter((u) => !u.includes('['));
    for (const url of reachable) {
      const got = await fetchMedia(url, PRIVATE_OK);
      expect(got.bytes.equals(PNG), url).toBe(true);
      expect(got.contentType).toBe('image/png');
    }
    expect(srv.total()).toBe(reachable.length);
  });

  it('refuses a name if ANY of its addresses is not allowed', async () => {
    const lookup = async (): Promise<Array<{ address: string; family: number }>> => [
      { address: '8.8.8.8', family: 4 },
      { address: '10.0.0.7', family: 4 },
    ];
    const err = await appError(fetchMediaWith('http://mixed.test/a.png', BASE, { lookup }));
    expect(err.code).toBe('url_not_allowed');
    expect(err.message).toContain('a private address (10.0.0.7)');
  });

  it('connects to the vetted address, never resolving the name again', async () => {
    let lookups = 0;
    const lookup = async (): Promise<Array<{ address: string; family: number }>> => {
      lookups++;
      return lookups === 1 ? [{ address: '127.0.0.1', family: 4 }] : [{ address: '10.9.9.9', family: 4 }];
    };
    // "vetted.test" does not exist in real DNS: success proves the socket used the vetted address.
    const got = await fetchMediaWith(`http://vetted.test:${srv.port}/a.png`, BASE, {
      lookup,
      isAllowed: (_ip, host) => host === 'vetted.test',
    });
    expect(got.bytes.equals(PNG)).toBe(true);
    expect(got.finalUrl).toBe(`http://vetted.test:${srv.port}/a.png`);
    expect(lookups).toBe(1);
    expect(srv.hits.get('/a.png')).toBe(1);
  });
});

describe('fetchMedia: schemes and URL syntax', () => {
  it.each([
    'ftp://example.com/a.png',
    'file:///etc/passwd',
    `data:image/png;base64,${PNG.toString('base64')}`,
    'javascript:alert(1)',
    'gopher://example.com/',
    'ws://example.com/',
  ])('refuses %s', async (url) => {
    const err = await appError(fetchMedia(url, BASE));
    expect(err.code).toBe('url_not_allowed');
    expect(err.param).toBe('image_urls[0]');
    expect(err.message).toMatch(/^image_urls\[0\]: only http and https URLs are allowed; got a [a-z]+: URL$/);
  });

  it.each(['not a url', '/relative/path.png', 'http://', ''])('rejects %j as invalid_request', async (url) => {
    const err = await appError(fetchMedia(url, BASE));
    expect(err.code).toBe('invalid_request');
    expect(err.status).toBe(400);
    expect(err.param).toBe('image_urls[0]');
    expect(err.message).toBe('image_urls[0]: is not a valid absolute URL');
  });
});

describe('fetchMedia: redirects', () => {
  /** "public.test" resolves to the loopback server and is the only allowed host name. */
  const deps = {
    lookup: async (host: string): Promise<Array<{ address: string; family: number }>> =>
      host === 'public.test' || host === 'evil.test' ? [{ address: '127.0.0.1', family: 4 }] : [],
    isAllowed: (ip: string, host: string): boolean => host === 'public.test' || isPublicAddress(ip),
  };

  it('re-checks the address of a redirect target (name)', async () => {
    const target = encodeURIComponent(`http://evil.test:${srv.port}/target`);
    const err = await appError(
      fetchMediaWith(`http://public.test:${srv.port}/to?u=${target}`, BASE, {
        ...deps,
        isAllowed: (_ip, host) => host === 'public.test',
      }),
    );
    expect(err.code).toBe('url_not_allowed');
    expect(err.param).toBe('image_urls[0]');
    expect(err.message).toBe(
      `image_urls[0]: http://public.test:${srv.port}/to?… redirects to http://evil.test:${srv.port}/target, which resolves to a loopback address (127.0.0.1); only public addresses are allowed`,
    );
    expect(srv.hits.get('/to')).toBe(1);
    expect(srv.hits.get('/target')).toBeUndefined();
  });

  it.each(['http://127.0.0.1:PORT/target', 'http://2130706433:PORT/target', 'http://[::1]:PORT/target', 'http://169.254.169.254/latest/meta-data/'])(
    'refuses a redirect to %s',
    async (raw) => {
      const target = encodeURIComponent(raw.replace('PORT', String(srv.port)));
      const err = await appError(fetchMediaWith(`http://public.test:${srv.port}/to?u=${target}`, BASE, deps));
      expect(err.code).toBe('url_not_allowed');
      expect(err.message).toContain('redirects to');
      expect(srv.hits.get('/target')).toBeUndefined();
    },
  );

  it('refuses a redirect to a non-http scheme', async () => {
    const target = encodeURIComponent('file:///etc/passwd');
    const err = await appError(fetchMediaWith(`http://public.test:${srv.port}/to?u=${target}`, BASE, deps));
    expect(err.code).toBe('url_not_allowed');
    expect(err.message).toBe(`image_urls[0]: only http and https URLs are allowed; http://public.test:${srv.port}/to?… redirects to a file: URL`);
  });

  it(`follows up to ${MAX_REDIRECTS} redirects`, async () => {
    const got = await fetchMediaWith(`http://public.test:${srv.port}/r/${10 - MAX_REDIRECTS}`, BASE, deps);
    expect(got.finalUrl).toBe(`http://public.test:${srv.port}/r/10`);
    // /r/10 is not a redirect; it answers the PNG.
    expect(got.bytes.equals(PNG)).toBe(true);
  });

  it(`refuses more than ${MAX_REDIRECTS} redirects`, async () => {
    const err = await appError(fetchMedia(`http://127.0.0.1:${srv.port}/r/0`, PRIVATE_OK));
    expect(err.code).toBe('media_fetch_failed');
    expect(err.message).toBe(
      `image_urls[0]: could not fetch http://127.0.0.1:${srv.port}/r/0 (redirected to http://127.0.0.1:${srv.port}/r/3): more than ${MAX_REDIRECTS} redirects`,
    );
    expect(srv.total()).toBe(MAX_REDIRECTS + 1);
  });

  it('trusts a trusted origin only, hop by hop (G270): its own private address is fetched, a redirect off it to another origin is vetted', async () => {
    const origin = `http://127.0.0.1:${srv.port}`;
    const trusted: FetchMediaOptions = { ...BASE, trustedOrigins: [origin] };
    expect((await fetchMedia(`${origin}/image.png`, trusted)).bytes.equals(PNG)).toBe(true);
    // the same host on another port is another origin
    const other = await server((_req, res) => {
      res.writeHead(200, { 'content-type': 'image/png' }).end(PNG);
    });
    const target = encodeURIComponent(`http://127.0.0.1:${other.port}/secret.png`);
    const err = await appError(fetchMedia(`${origin}/to?u=${target}`, trusted));
    expect(err.code).toBe('url_not_allowed');
    expect(err.cause).toBeInstanceOf(AddressNotAllowed);
    expect(err.cause).toMatchObject({ addressClass: 'loopback', redirected: true });
    expect(other.total()).toBe(0);
    // a redirect within the trusted origin is followed
    const within = encodeURIComponent(`${origin}/image.png`);
    expect((await fetchMedia(`${origin}/to?u=${within}`, trusted)).finalUrl).toBe(`${origin}/image.png`);
  });

  it('fails a redirect without Location', async () => {
    const err = await appError(fetchMedia(`http://127.0.0.1:${srv.port}/no-location`, PRIVATE_OK));
    expect(err.code).toBe('media_fetch_failed');
    expect(err.message).toContain('HTTP 302 without a Location header');
  });
});

describe('fetchMedia: size cap', () => {
  it('aborts a chunked body as soon as it exceeds maxBytes', async () => {
    let written = 0;
    let closed = false;
    const s = await server((_req, res) => {
      res.writeHead(200, { 'content-type': 'image/png' });
      const chunk = Buffer.alloc(16 * 1024, 7);
      const pump = (): void => {
        while (!res.destroyed && written < 200 * 1024 * 1024) {
          written += chunk.length;
          if (!res.write(chunk)) {
            res.once('drain', pump);
            return;
          }
        }
      };
      res.on('close', () => {
        closed = true;
      });
      pump();
    });
    const err = await appError(fetchMedia(`http://127.0.0.1:${s.port}/big`, { ...PRIVATE_OK, maxBytes: 100_000 }));
    expect(err.code).toBe('media_fetch_failed');
    expect(err.status).toBe(400);
    expect(err.message).toBe(`image_urls[0]: http://127.0.0.1:${s.port}/big is too large: more than the limit of 100000 bytes`);
    await expect.poll(() => closed).toBe(true);
    expect(written).toBeLessThan(20 * 1024 * 1024);
  });

  it('refuses a Content-Length over the cap without reading the body', async () => {
    const s = await server((_req, res) => {
      res.writeHead(200, { 'content-type': 'image/png', 'content-length': String(50_000_000) });
      res.write(Buffer.alloc(1024)); // then stall: reading the body would hang until the timeout
    });
    const err = await appError(fetchMedia(`http://127.0.0.1:${s.port}/big`, { ...PRIVATE_OK, maxBytes: 1_000_000, timeoutMs: 10_000 }));
    // answered from the header: reading the stalled body could only have ended in the timeout
    expect(err.message).not.toContain('timed out');
    expect(err.code).toBe('media_fetch_failed');
    expect(err.message).toContain('Content-Length 50000000 bytes exceeds the limit of 1000000 bytes');
  });

  it('accepts a body of exactly maxBytes', async () => {
    const got = await fetchMedia(`http://127.0.0.1:${srv.port}/a.png`, { ...PRIVATE_OK, maxBytes: PNG.length });
    expect(got.bytes.length).toBe(PNG.length);
  });
});

describe('fetchMedia: HTTP and network failures', () => {
  it('names the status of a non-2xx answer', async () => {
    const err = await appError(fetchMedia(`http://127.0.0.1:${srv.port}/missing.png`, { ...PRIVATE_OK, field: 'image_urls[1]' }));
    expect(err.code).toBe('media_fetch_failed');
    expect(err.status).toBe(400);
    expect(err.param).toBe('image_urls[1]');
    expect(err.retryable).toBe(false);
    expect(err.message).toBe(`image_urls[1]: could not fetch http://127.0.0.1:${srv.port}/missing.png: HTTP 404`);
  });

  it('marks a 5xx answer retryable', async () => {
    const err = await appError(fetchMedia(`http://127.0.0.1:${srv.port}/boom`, PRIVATE_OK));
    expect(err.message).toContain(': HTTP 503');
    expect(err.retryable).toBe(true);
  });

  it('never puts credentials or the query string in messages', async () => {
    const url = `http://user:s3cret@127.0.0.1:${srv.port}/missing.png?X-Amz-Signature=abcdef`;
    const err = await appError(fetchMedia(url, PRIVATE_OK));
    expect(err.message).toBe(`image_urls[0]: could not fetch http://127.0.0.1:${srv.port}/missing.png?…: HTTP 404`);
    expect(err.message).not.toContain('s3cret');
    expect(err.message).not.toContain('abcdef');
  });

  it('turns an unresolvable name into a 400 media_fetch_failed (real DNS)', async () => {
    const err = await appError(fetchMedia('http://does-not-exist.invalid/a.png', BASE));
    expect(err.code).toBe('media_fetch_failed');
    expect(err.status).toBe(400);
    expect(err.param).toBe('image_urls[0]');
    expect(err.message).toMatch(/^image_urls\[0\]: could not fetch http:\/\/does-not-exist\.invalid\/a\.png: /);
  });

  it('turns ENOTFOUND into "does not resolve"', async () => {
    const lookup = async (): Promise<never> => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND nowhere.test'), { code: 'ENOTFOUND' });
    };
    const err = await appError(fetchMediaWith('https://nowhere.test/a.png', BASE, { lookup }));
    expect(err.code).toBe('media_fetch_failed');
    expect(err.status).toBe(400);
    expect(err.message).toBe('image_urls[0]: could not fetch https://nowhere.test/a.png: host name nowhere.test does not resolve');
  });

  it('turns an empty lookup answer into "does not resolve"', async () => {
    const err = await appError(fetchMediaWith('http://empty.test/a.png', BASE, { lookup: async () => [] }));
    expect(err.code).toBe('media_fetch_failed');
    expect(err.message).toContain('host name empty.test does not resolve');
  });

  it('reports a refused connection', async () => {
    const s = await startServer(() => undefined);
    await s.close();
    const err = await appError(fetchMedia(`http://127.0.0.1:${s.port}/a.png`, PRIVATE_OK));
    expect(err.code).toBe('media_fetch_failed');
    expect(err.message).toBe(`image_urls[0]: could not fetch http://127.0.0.1:${s.port}/a.png: connection refused`);
  });

  it('times out on a server that never answers, within the bound', async () => {
    let dropped = false; // the fetch gave up on the connection (the server never does)
    const s = await server((req) => {
      req.socket.once('close', () => {
        dropped = true;
      });
    }); // accepts, never responds
    const started = Date.now();
    const err = await appError(fetchMedia(`http://127.0.0.1:${s.port}/slow`, { ...PRIVATE_OK, timeoutMs: 300 }));
    const elapsed = Date.now() - started;
    expect(err.code).toBe('media_fetch_failed');
    expect(err.status).toBe(400);
    expect(err.retryable).toBe(true);
    expect(err.message).toBe(`image_urls[0]: could not fetch http://127.0.0.1:${s.port}/slow: timed out after 0.3 s`);
    // ended by the 0.3 s bound, not by the 15 s default: the message names the bound that fired
    expect(elapsed).toBeGreaterThanOrEqual(250); // and not before it (a lower bound holds under any load)
    await expect.poll(() => dropped).toBe(true);
    expect(s.total()).toBe(1);
  });

  it('times out on a body that stalls mid-way', async () => {
    const s = await server((_req, res) => {
      res.writeHead(200, { 'content-type': 'image/png' });
      res.write(PNG); // never ends
    });
    const err = await appError(fetchMedia(`http://127.0.0.1:${s.port}/stall`, { ...PRIVATE_OK, timeoutMs: 300 }));
    expect(err.message).toContain('timed out after 0.3 s');
  });

  it('bounds a hanging DNS lookup by the total timeout', async () => {
    const lookup = (): Promise<never> => new Promise<never>(() => undefined);
    const err = await appError(fetchMediaWith('http://hang.test/a.png', { ...BASE, timeoutMs: 200 }, { lookup }));
    expect(err.code).toBe('media_fetch_failed');
    expect(err.message).toBe('image_urls[0]: could not fetch http://hang.test/a.png: timed out after 0.2 s');
  });

  it('rejects with the caller reason when the caller aborts', async () => {
    const s = await server(() => undefined);
    const ctrl = new AbortController();
    const reason = new Error('task cancelled');
    setTimeout(() => ctrl.abort(reason), 100);
    await expect(fetchMedia(`http://127.0.0.1:${s.port}/slow`, { ...PRIVATE_OK, signal: ctrl.signal })).rejects.toBe(reason);
  });

  it('fails an empty body', async () => {
    const err = await appError(fetchMedia(`http://127.0.0.1:${srv.port}/empty`, PRIVATE_OK));
    expect(err.code).toBe('media_fetch_failed');
    expect(err.message).toBe(`image_urls[0]: http://127.0.0.1:${srv.port}/empty returned an empty body`);
  });
});

describe('fetchMedia: accept()', () => {
  const imagesOnly = (_ct: string, first: Buffer): boolean => isImageBytes(first) !== null;

  it('passes the bare content type and the first bytes', async () => {
    const seen: Array<[string, number]> = [];
    await fetchMedia(`http://127.0.0.1:${srv.port}/a.png`, {
      ...PRIVATE_OK,
      accept: (ct, first) => {
        seen.push([ct, first.length]);
        return true;
      },
    });
    expect(seen).toEqual([['image/png', PNG.length]]);
  });

  it('accepts real image bytes', async () => {
    const got = await fetchMedia(`http://127.0.0.1:${srv.port}/a.png`, { ...PRIVATE_OK, accept: imagesOnly });
    expect(got.bytes.equals(PNG)).toBe(true);
  });

  it('rejects with an error naming the field', async () => {
    const err = await appError(fetchMedia(`http://127.0.0.1:${srv.port}/html`, { ...PRIVATE_OK, field: 'image_urls[2]', accept: imagesOnly }));
    expect(err.code).toBe('media_fetch_failed');
    expect(err.param).toBe('image_urls[2]');
    expect(err.message).toBe(`image_urls[2]: http://127.0.0.1:${srv.port}/html is not an accepted kind of file (Content-Type text/html)`);
  });

  it('checks the first bytes before the whole body arrives', async () => {
    const s = await server((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write(Buffer.alloc(4096, 0x41)); // then stall: only an early check can answer before the timeout
    });
    const err = await appError(fetchMedia(`http://127.0.0.1:${s.port}/x`, { ...PRIVATE_OK, timeoutMs: 5_000, accept: imagesOnly }));
    expect(err.message).toContain('is not an accepted kind of file (Content-Type text/plain)');
    expect(err.message).not.toContain('timed out'); // decided on the first bytes, not after the stalled body
  });
});

describe('fetchMediaToFile: the body streams to a file', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mg-fetch-'));
  });
  afterEach(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const files = (): string[] => fs.readdirSync(dir);
  const imagesOnly = (_ct: string, first: Buffer): boolean => isImageBytes(first) !== null;

  it('answers the file (path, size, first bytes), its content the body', async () => {
    const got = await fetchMediaToFile(`http://127.0.0.1:${srv.port}/a.png`, { ...PRIVATE_OK, dir, accept: imagesOnly });
    expect(path.dirname(got.path)).toBe(dir);
    expect(fs.readFileSync(got.path).equals(PNG)).toBe(true);
    expect(got).toMatchObject({ bytes: PNG.length, contentType: 'image/png', finalUrl: `http://127.0.0.1:${srv.port}/a.png` });
    expect(got.head.equals(PNG.subarray(0, SNIFF_BYTES))).toBe(true);
  });

  it('the bytes are on disk while the body is still arriving (nothing waits for the whole body in memory)', async () => {
    // The server sends the first half and holds the rest until the test sees that half in a file:
    // a fetcher that collected the body before writing it would never let the test open the gate.
    const half = Buffer.concat([PNG, Buffer.alloc(256 * 1024 - PNG.length, 3)]);
    let openGate!: () => void;
    const gate = new Promise<void>((resolve) => {
      openGate = resolve;
    });
    const s = await server((_req, res) => {
      res.writeHead(200, { 'content-type': 'image/png', 'content-length': String(2 * half.length) });
      res.write(half);
      void gate.then(() => res.end(Buffer.alloc(half.length, 4)));
    });
    const fetching = fetchMediaToFile(`http://127.0.0.1:${s.port}/big.png`, { ...PRIVATE_OK, dir, accept: imagesOnly });
    const partial = await expect
      .poll(() => files().find((f) => fs.statSync(path.join(dir, f)).size === half.length), { timeout: 5_000 })
      .toBeDefined()
      .then(() => files()[0]!);
    const inode = fs.statSync(path.join(dir, partial)).ino;
    openGate();
    const got = await fetching;
    expect(got.bytes).toBe(2 * half.length);
    expect(path.basename(got.path)).toBe(partial);
    expect(fs.statSync(got.path).ino).toBe(inode);
  });

  it('tells the Content-Length before reading the body, and undefined when there is none', async () => {
    let answered = 0;
    const s = await server((req, res) => {
      answered++;
      if (req.url === '/sized.png') res.writeHead(200, { 'content-type': 'image/png', 'content-length': String(PNG.length) });
      else res.writeHead(200, { 'content-type': 'image/png', 'transfer-encoding': 'chunked' });
      res.write(PNG.subarray(0, 8));
      setImmediate(() => res.end(PNG.subarray(8)));
    });
    const lengths: Array<number | undefined> = [];
    const onLength = (n: number | undefined): void => {
      lengths.push(n);
      expect(files()).toEqual([]);
    }; // before any byte is written
    await fetchMediaToFile(`http://127.0.0.1:${s.port}/sized.png`, { ...PRIVATE_OK, dir, onLength });
    await fetchMediaToFile(`http://127.0.0.1:${s.port}/chunked.png`, {
      ...PRIVATE_OK,
      dir: fs.mkdtempSync(path.join(dir, 'x')),
      onLength: (n) => lengths.push(n),
    });
    expect(lengths).toEqual([PNG.length, undefined]);
    expect(answered).toBe(2);
  });

  it('leaves no file behind when the fetch fails or is aborted mid-body', async () => {
    const s = await server((req, res) => {
      if (req.url === '/big') {
        res.writeHead(200, { 'content-type': 'image/png' });
        res.write(PNG);
        res.write(Buffer.alloc(200_000)); // then more than the cap
        res.end(Buffer.alloc(200_000));
      } else {
        res.writeHead(200, { 'content-type': 'image/png' });
        res.write(Buffer.concat([PNG, Buffer.alloc(4096)])); // then stall
      }
    });
    const url = (p: string): string => `http://127.0.0.1:${s.port}${p}`;
    const tooLarge = await appError(fetchMediaToFile(url('/big'), { ...PRIVATE_OK, dir, maxBytes: 100_000 }));
    expect(tooLarge.message).toContain('more than the limit of 100000 bytes');
    const timedOut = await appError(fetchMediaToFile(url('/stall'), { ...PRIVATE_OK, dir, timeoutMs: 300 }));
    expect(timedOut.message).toContain('timed out after 0.3 s');
    const ctrl = new AbortController();
    const reason = new Error('task cancelled');
    const aborted = fetchMediaToFile(url('/stall'), { ...PRIVATE_OK, dir, signal: ctrl.signal });
    await expect.poll(() => files().length).toBe(1); // the partial file exists while it hangs
    ctrl.abort(reason);
    await expect(aborted).rejects.toBe(reason);
    const notAccepted = await appError(fetchMediaToFile(`http://127.0.0.1:${srv.port}/html`, { ...PRIVATE_OK, dir, accept: imagesOnly }));
    expect(notAccepted.message).toContain('is not an accepted kind of file');
    const empty = await appError(fetchMediaToFile(`http://127.0.0.1:${srv.port}/empty`, { ...PRIVATE_OK, dir }));
    expect(empty.message).toContain('returned an empty body');
    const missing = await appError(fetchMediaToFile(`http://127.0.0.1:${srv.port}/missing.png`, { ...PRIVATE_OK, dir }));
    expect(missing.message).toContain('HTTP 404');
    expect(files()).toEqual([]);
  });
});

describe('isImageBytes', () => {
  const bmp = Buffer.alloc(30);
  bmp.write('BM', 0, 'latin1');
  bmp.writeUInt32LE(40, 14);
  it.each([
    [PNG, 'image/png'],
    [Buffer.from('ffd8ffe000104a464946', 'hex'), 'image/jpeg'],
    [Buffer.from('RIFF\x24\x00\x00\x00WEBPVP8 ', 'latin1'), 'image/webp'],
    [Buffer.from('GIF89a\x01\x00', 'latin1'), 'image/gif'],
    [Buffer.from('GIF87a\x01\x00', 'latin1'), 'image/gif'],
    [bmp, 'image/bmp'],
    [Buffer.from('II*\x00\x08\x00\x00\x00', 'latin1'), 'image/tiff'],
    [Buffer.from('MM\x00*\x00\x00\x00\x08', 'latin1'), 'image/tiff'],
    [Buffer.from('\x00\x00\x00\x18ftypheic\x00\x00\x00\x00', 'latin1'), 'image/heic'],
    [Buffer.from('\x00\x00\x00\x18ftypmif1\x00\x00\x00\x00', 'latin1'), 'image/heic'],
    [Buffer.from('\x00\x00\x00\x18ftypisom\x00\x00\x00\x00', 'latin1'), null], // mp4
    [Buffer.from('RIFF\x24\x00\x00\x00WAVEfmt ', 'latin1'), null],
    [Buffer.from('BMxx', 'latin1'), null],
    [Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'), null],
    [Buffer.from('<!doctype html>'), null],
    [Buffer.alloc(0), null],
    [Buffer.from('89504e47', 'hex'), null], // truncated PNG signature
  ])('%#: %s', (bytes, expected) => {
    expect(isImageBytes(bytes)).toBe(expected);
  });
});
