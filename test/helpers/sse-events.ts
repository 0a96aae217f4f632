/** Reads a server-sent-events response event by event (test-only): `id`, `event`, parsed `data`; comments apart. */
export interface SseEvent {
  id?: string;
  event?: string;
  data: any;
}

export class SseReader {
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>;
  private readonly decoder = new TextDecoder();
  private buffer = '';
  /** Comment lines seen so far (`: ping`). */
  readonly comments: string[] = [];
  /** True once the server ended the response. */
  ended = false;

  constructor(res: Response) {
    this.reader = res.body!.getReader();
  }

  /** The next event, or undefined when the stream ended first. */
  async next(): Promise<SseEvent | undefined> {
    for (;;) {
      const cut = this.buffer.indexOf('\n\n');
      if (cut >= 0) {
        const block = this.buffer.slice(0, cut);
        this.buffer = this.buffer.slice(cut + 2);
        const event: Partial<SseEvent> & { lines: string[] } = { lines: [] };
        for (const line of block.split('\n')) {
          if (line.startsWith(':')) this.comments.push(line);
          else if (line.startsWith('id: ')) event.id = line.slice(4);
          else if (line.startsWith('event: ')) event.event = line.slice(7);
          else if (line.startsWith('data: ')) event.lines.push(line.slice(6));
        }
        if (event.lines.length === 0) continue;
        return {
          ...(event.id !== undefined && { id: event.id }),
          ...(event.event !== undefined && { event: event.event }),
          data: JSON.parse(event.lines.join('\n')),
        };
      }
      if (this.ended) return undefined;
      const r = await this.reader.read();
      if (r.done) this.ended = true;
      else this.buffer += this.decoder.decode(r.value, { stream: true });
    }
  }

  /** Every event up to the end of the stream. */
  async rest(): Promise<SseEvent[]> {
    const out: SseEvent[] = [];
    for (let e = await this.next(); e; e = await this.next()) out.push(e);
    return out;
  }

  async cancel(): Promise<void> {
    await this.reader.cancel();
  }
}
