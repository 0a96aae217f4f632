/**
 * An incremental Server-Sent Events parser (the WHATWG "event stream" rules, the parts that matter
 * for OpenAI-compatible servers): bytes may arrive split anywhere (inside a line, inside a CRLF,
 * inside a multi-byte UTF-8 character); lines end in LF, CRLF or CR; `data:` lines of one event are
 * joined with `\n`; lines starting with `:` are comments (heartbeats); an event is dispatched at a
 * blank line; `event:` names it; `id:` and `retry:` are accepted and ignored.
 */

export interface SseEvent {
  /** `event:` field, `message` when absent. */
  event: string;
  data: string;
}

export class SseParser {
  private readonly decoder = new TextDecoder('utf-8');
  /** Text of the line being assembled (no terminator yet). */
  private line = '';
  /** The previous chunk ended in CR: a LF at the start of the next one belongs to it. */
  private afterCr = false;
  private dataLines: string[] = [];
  private eventName = '';

  /** Feeds bytes (or already-decoded text); returns the events completed by them. */
  push(chunk: Uint8Array | string): SseEvent[] {
    let text = typeof chunk === 'string' ? chunk : this.decoder.decode(chunk, { stream: true });
    const out: SseEvent[] = [];
    if (this.afterCr && text.startsWith('\n')) text = text.slice(1);
    this.afterCr = false;
    let start = 0;
    for (;;) {
      const lf = text.indexOf('\n', start);
      const cr = text.indexOf('\r', start);
      let end: number;
      let next: number;
      if (cr !== -1 && (lf === -1 || cr < lf)) {
        end = cr;
        if (cr + 1 < text.length) next = text.charCodeAt(cr + 1) === 10 ? cr + 2 : cr + 1;
        else {
          next = cr + 1;
          this.afterCr = true;
        }
      } else if (lf !== -1) {
        end = lf;
        next = lf + 1;
      } else {
        break;
      }
      const line = this.line === '' ? text.slice(start, end) : this.line + text.slice(start, end);
      this.line = '';
      this.takeLine(line, out);
      start = next;
    }
    if (start < text.length) this.line += text.slice(start);
    return out;
  }

  /** End of the stream: a final event without its blank line is still dispatched (lenient). */
  end(): SseEvent[] {
    const out: SseEvent[] = [];
    const rest = this.decoder.decode();
    if (rest) out.push(...this.push(rest));
    if (this.line !== '') {
      const line = this.line;
      this.line = '';
      this.takeLine(line, out);
    }
    this.takeLine('', out);
    return out;
  }

  private takeLine(line: string, out: SseEvent[]): void {
    if (line === '') {
      if (this.dataLines.length > 0) out.push({ event: this.eventName || 'message', data: this.dataLines.join('\n') });
      this.dataLines = [];
      this.eventName = '';
      return;
    }
    if (line.charCodeAt(0) === 58 /* : */) return; // comment / heartbeat
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    if (field === 'data') this.dataLines.push(value);
    else if (field === 'event') this.eventName = value;
    // id, retry and unknown fields: ignored
  }
}
