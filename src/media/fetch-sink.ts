/**
 * Where the safe fetcher (safe-fetch.ts) puts a body as it arrives: a file (media review, assets)
 * or memory (the task runner's fallback for media that were not reviewed).
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';

/** One body's destination: opened when the body starts, then finished or discarded, once. */
export interface BodySink<T> {
  /** The stream the body is written to (with backpressure). */
  open(): Promise<Writable>;
  /** What the fetch answers once the whole body is written. */
  finish(): Promise<T>;
  /** Drops whatever was written (any failure or abort); never throws. */
  discard(): Promise<void>;
}

/** Collects the body in memory. */
export function memorySink(): BodySink<{ bytes: Buffer }> {
  const chunks: Buffer[] = [];
  return {
    open: async () =>
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          chunks.push(chunk);
          done();
        },
      }),
    finish: async () => ({ bytes: Buffer.concat(chunks) }),
    discard: async () => {
      chunks.length = 0;
    },
  };
}

/**
 * Writes the body to a new file `fetch-<uuid>.part` in `dir`. The file is created (exclusively)
 * before the first byte is written, so `discard` always finds what there is to remove.
 */
export function fileSink(dir: string): BodySink<{ path: string; bytes: number }> {
  const file = path.join(dir, `fetch-${randomUUID()}.part`);
  let out: fs.WriteStream | undefined;
  return {
    async open() {
      const handle = await fs.promises.open(file, 'wx');
      out = handle.createWriteStream();
      return out;
    },
    async finish() {
      const stream = out;
      if (stream !== undefined && !stream.closed)
        await new Promise<void>((resolve) => {
          stream.once('close', () => resolve());
        });
      return { path: file, bytes: (await fs.promises.stat(file)).size };
    },
    async discard() {
      out?.destroy();
      await fs.promises.rm(file, { force: true }).catch(() => undefined);
    },
  };
}
