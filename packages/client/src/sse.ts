/**
 * Server-sent events read by hand (WHATWG "event stream interpretation", the parts a data-only
 * stream uses): bytes are decoded as a stream (a character split across chunks is kept whole),
 * lines end at CRLF, LF or CR (a CR at the end of a chunk waits for a possible LF), `data:` lines
 * of one event are joined with "\n", comments (`:`) and other fields are skipped, and an event is
 * dispatched at a blank line. Yields each event's data.
 */
export async function* sseData(body: ReadableStream<Uint8Array>): AsyncGenerator<string, void, undefined> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let data: string[] = [];
  let pendingCr = false;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
      if (pendingCr && buffer.startsWith('\n')) buffer = buffer.slice(1);
      pendingCr = false;
      for (;;) {
        const end = buffer.search(/[\r\n]/);
        if (end < 0) break;
        if (buffer[end] === '\r' && end === buffer.length - 1 && !done) { pendingCr = true; }
        const line = buffer.slice(0, end);
        const skip = buffer[end] === '\r' && buffer[end + 1] === '\n' ? 2 : 1;
        buffer = buffer.slice(end + skip);
        if (line === '') {
          if (data.length > 0) yield data.join('\n');
          data = [];
          continue;
        }
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        if (field !== 'data') continue;
        const value = colon < 0 ? '' : line.slice(colon + 1);
        data.push(value.startsWith(' ') ? value.slice(1) : value);
      }
      if (done) return; // an event not ended by a blank line is dropped (as the standard says)
    }
  } finally {
    await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}
