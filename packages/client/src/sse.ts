/** The longest line or event {@link sseData} takes by default (characters). */
export const MAX_EVENT_CHARS = 8 * 1024 * 1024;

/**
 * Server-sent events read by hand (WHATWG "event stream interpretation", the parts a data-only
 * stream uses): bytes are decoded as a stream (a character split across chunks is kept whole),
 * lines end at CRLF, LF or CR (a CR at the end of a chunk waits for a possible LF), `data:` lines
 * of one event are joined with "\n", comments (`:`) and other fields are skipped, and an event is
 * dispatched at a blank line. Yields each event's data. A line or an event longer than
 * `maxChars` (default {@link MAX_EVENT_CHARS}) is an error: a broken or hostile server cannot make
 * the reader hold an endless line, and each chunk is scanned from where the last scan stopped.
 */
export async function* sseData(body: ReadableStream<Uint8Array>, maxChars = MAX_EVENT_CHARS): AsyncGenerator<string, void, undefined> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const eol = /[\r\n]/g;
  let buffer = '';
  let scanned = 0;
  let data: string[] = [];
  let dataChars = 0;
  let pendingCr = false;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
      if (pendingCr && buffer.startsWith('\n')) buffer = buffer.slice(1);
      pendingCr = false;
      for (;;) {
        eol.lastIndex = scanned;
        const end = eol.exec(buffer)?.index ?? -1;
        if (end < 0) {
          scanned = buffer.length;
          if (buffer.length > maxChars) throw new Error(`an event stream line is longer than ${maxChars} characters`);
          break;
        }
        if (buffer[end] === '\r' && end === buffer.length - 1 && !done) {
          pendingCr = true;
        }
        const line = buffer.slice(0, end);
        const skip = buffer[end] === '\r' && buffer[end + 1] === '\n' ? 2 : 1;
        buffer = buffer.slice(end + skip);
        scanned = 0;
        if (line === '') {
          if (data.length > 0) yield data.join('\n');
          data = [];
          dataChars = 0;
          continue;
        }
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        if (field !== 'data') continue;
        const value = colon < 0 ? '' : line.slice(colon + 1);
        data.push(value.startsWith(' ') ? value.slice(1) : value);
        dataChars += value.length;
        if (dataChars > maxChars) throw new Error(`an event stream event is longer than ${maxChars} characters`);
      }
      if (done) return; // an event not ended by a blank line is dropped (as the standard says)
    }
  } finally {
    await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}
