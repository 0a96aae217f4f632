import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { SseWriter } from './sse.js';

/** A response that records each write call (each would be one socket write). */
function fakeResponse() {
  const res = new EventEmitter() as EventEmitter & { writes: string[]; head?: number; ended: boolean };
  res.writes = [];
  res.ended = false;
  Object.assign(res, {
    writableNeedDrain: false,
    destroyed: false,
    writableEnded: false,
    writeHead(status: number) {
      res.head = status;
      return res;
    },
    write(text: string) {
      res.writes.push(text);
      return true;
    },
    end(text?: string) {
      if (text) res.writes.push(text);
      res.ended = true;
      (res as unknown as { writableEnded: boolean }).writableEnded = true;
    },
  });
  return res;
}

describe('SseWriter', () => {
  it('sends held events with the next event in one write, and nothing before it', async () => {
    const res = fakeResponse();
    const sse = new SseWriter(res as unknown as ServerResponse, 0);
    sse.holdJson('{"role":"assistant"}');
    expect(res.writes).toEqual([]);
    await sse.send({ content: 'hi' });
    expect(res.writes).toEqual(['data: {"role":"assistant"}\n\ndata: {"content":"hi"}\n\n']);
    await sse.done();
    expect(res.writes[1]).toBe('data: [DONE]\n\n');
    expect(res.ended).toBe(true);
  });

  it('a ping carries held events; end() flushes what is still held', async () => {
    const res = fakeResponse();
    const sse = new SseWriter(res as unknown as ServerResponse, 0);
    sse.holdJson('{"a":1}');
    await sse.ping();
    expect(res.writes).toEqual(['data: {"a":1}\n\n: ping\n\n']);
    sse.holdJson('{"b":2}');
    sse.end();
    expect(res.writes[1]).toBe('data: {"b":2}\n\n');
  });

  it('flushSoon writes held events at the end of the turn, unless a write carries them first', async () => {
    const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
    const res = fakeResponse();
    const sse = new SseWriter(res as unknown as ServerResponse, 0);
    sse.holdJson('{"role":"assistant"}');
    sse.flushSoon();
    expect(res.writes).toEqual([]);
    await turn();
    expect(res.writes).toEqual(['data: {"role":"assistant"}\n\n']);

    const res2 = fakeResponse();
    const sse2 = new SseWriter(res2 as unknown as ServerResponse, 0);
    sse2.holdJson('{"role":"assistant"}');
    sse2.flushSoon();
    sse2.sendJson('{"content":"hi"}');
    await turn();
    expect(res2.writes).toEqual(['data: {"role":"assistant"}\n\ndata: {"content":"hi"}\n\n']);
  });
});
