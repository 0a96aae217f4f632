/**
 * How replies of 500 or more are logged (G425): faults at error with their stack, refusals the
 * gateway gives on purpose at warn without one.
 */
import { Writable } from 'node:stream';
import Fastify, { type FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors.js';
import { registerErrorHandling } from '../../src/http/error-handler.js';

interface LogLine {
  level: number;
  msg: string;
  code?: string;
  err?: { type: string; message: string; stack: string };
}

const apps: Array<{ close(): Promise<unknown> }> = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((a) => a.close()));
});

/** An app whose routes throw what they are given, and the log lines it wrote. */
async function appThrowing(errors: Record<string, () => unknown>): Promise<{ get(path: string): Promise<number>; lines: LogLine[] }> {
  const lines: LogLine[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as LogLine);
      done();
    },
  });
  const app = Fastify({ loggerInstance: pino({ level: 'info' }, sink) as FastifyBaseLogger });
  apps.push(app);
  registerErrorHandling(app);
  for (const [path, make] of Object.entries(errors)) {
    app.get(path, async () => {
      throw make();
    });
  }
  await app.ready();
  return { get: async (path) => (await app.inject({ method: 'GET', url: path })).statusCode, lines };
}

describe('server errors in the log (G425)', () => {
  it('a refusal given on purpose is a warning with its code and no stack; a fault is an error with its stack', async () => {
    const { get, lines } = await appThrowing({
      '/unavailable': () => new AppError('upstream_unavailable', 'No model provider for this model takes requests now; retry in 5 s'),
      '/wrapped': () => new AppError('internal_error', 'Internal server error', { cause: new Error('disk on fire') }),
      '/thrown': () => new TypeError('x is not a function'),
      '/client': () => new AppError('invalid_request', 'size must be one of ...'),
    });
    expect(await get('/unavailable')).toBe(503);
    expect(await get('/wrapped')).toBe(500);
    expect(await get('/thrown')).toBe(500);
    expect(await get('/client')).toBe(400);
    const failed = lines.filter((l) => l.msg.startsWith('request failed')); // Fastify's own request lines left out
    expect(failed.map((l) => [l.level, l.msg.split(':')[0], l.code ?? l.err?.type])).toEqual([
      [40, 'request failed', 'upstream_unavailable'],
      [50, 'request failed', 'AppError'],
      [50, 'request failed', 'TypeError'],
    ]);
    expect(failed[0]!.msg).toBe('request failed: No model provider for this model takes requests now; retry in 5 s');
    expect(failed[0]!.err).toBeUndefined();
    expect(failed[1]!.err?.stack).toMatch(/disk on fire/); // the cause goes to the log with the stack
    expect(failed[2]!.err?.stack).toMatch(/TypeError: x is not a function/);
  });
});
