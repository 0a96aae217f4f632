import { describe, expect, it } from 'vitest';
import { SseParser, type SseEvent } from '../../src/providers/toolkit/sse-parse.js';

function parseSplit(text: string, size: number): SseEvent[] {
  const p = new SseParser();
  const bytes = Buffer.from(text, 'utf8');
  const out: SseEvent[] = [];
  for (let i = 0; i < bytes.length; i += size) out.push(...p.push(bytes.subarray(i, i + size)));
  out.push(...p.end());
  return out;
}

describe('SSE parser (upstream streams)', () => {
  const text =
    ': hello\n\ndata: {"a":1}\n\ndata: line1\ndata: line2\n\nevent: error\ndata: {"error":"x"}\n\nid: 7\nretry: 100\ndata:no-space\n\ndata: é你🌍\n\ndata: [DONE]\n\n';
  const expected: SseEvent[] = [
    { event: 'message', data: '{"a":1}' },
    { event: 'message', data: 'line1\nline2' },
    { event: 'error', data: '{"error":"x"}' },
    { event: 'message', data: 'no-space' },
    { event: 'message', data: 'é你🌍' },
    { event: 'message', data: '[DONE]' },
  ];

  it.each([1, 2, 3, 5, 7, 1000])('LF, bytes split every %i', (size) => {
    expect(parseSplit(text, size)).toEqual(expected);
  });

  it.each([1, 2, 3, 1000])('CRLF, bytes split every %i (CR and LF in different chunks)', (size) => {
    expect(parseSplit(text.replace(/\n/g, '\r\n'), size)).toEqual(expected);
  });

  it('bare CR line endings', () => {
    expect(parseSplit(text.replace(/\n/g, '\r'), 4)).toEqual(expected);
  });

  it('a last event without its blank line is still delivered at the end', () => {
    expect(parseSplit('data: a\n\ndata: b', 2)).toEqual([
      { event: 'message', data: 'a' },
      { event: 'message', data: 'b' },
    ]);
  });

  it('comments only and empty data lines', () => {
    expect(parseSplit(': ping\n\n: ping\n\n', 3)).toEqual([]);
    expect(parseSplit('data:\n\n', 3)).toEqual([{ event: 'message', data: '' }]);
  });
});
