/**
 * A result file an upstream answered inline, as a `data:` URL (fal's `sync_mode`, a Replicate
 * output), is written out and checked as a download is: bounded, its first bytes, the probe; the
 * task records it by its media type only.
 */
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, describe, expect, it } from 'vitest';
import { FsBlobStore } from '../../src/media/fs-blob-store.js';
import { UnrecoverableError } from '../../src/providers/types.js';
import { ResultStorage } from '../../src/tasks/result-storage.js';
import { tempDir } from '../helpers/temp-root.js';

const dir = tempDir();
const tmp = path.join(dir, 'tmp');
fs.mkdirSync(tmp);
const blobs = new FsBlobStore(path.join(dir, 'results'));
const storage = new ResultStorage({ blobs, tmpDir: tmp, allowPrivate: false, maxBytes: { image: 64 * 1024 } });
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const pngOf = (width: number, height: number) =>
  sharp({ create: { width, height, channels: 3, background: { r: 10, g: 200, b: 30 } } })
    .png()
    .toBuffer();
const failure = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e as Error,
  );

describe('a result answered as a data: URL', () => {
  it('is stored as the file, probed for its pixel size; the task keeps only its media type as the source', async () => {
    const png = await pngOf(48, 32);
    const url = `data:image/png;base64,${png.toString('base64')}`;
    const { result } = await storage.store('task-1', { files: [{ url, kind: 'image' }] }, new AbortController().signal);
    expect(result.files).toEqual([expect.objectContaining({ contentType: 'image/png', width: 48, height: 32, bytes: png.length })]);
    expect(result.sourceUrls).toEqual(['data:image/png']);
    expect(fs.readdirSync(tmp)).toEqual([]);
  });

  it('fails the task when it is not what was asked, too large or malformed, leaving nothing behind', async () => {
    const signal = new AbortController().signal;
    const text = await failure(storage.store('task-2', { files: [{ url: 'data:text/plain,hello%20world', kind: 'image' }] }, signal));
    expect(text).toBeInstanceOf(UnrecoverableError);
    expect(text?.message).toBe("the upstream's result is not an image (its first bytes say otherwise)");
    const big = await failure(
      storage.store('task-2', { files: [{ url: `data:image/png;base64,${Buffer.alloc(100 * 1024).toString('base64')}`, kind: 'image' }] }, signal),
    );
    expect(big).toBeInstanceOf(UnrecoverableError);
    expect(big?.message).toBe(`the upstream's result is larger than ${64 * 1024} bytes, the most the gateway keeps of an image`);
    const broken = await failure(storage.store('task-2', { files: [{ url: 'data:image/png;base64,%%%', kind: 'image' }] }, signal));
    expect(broken?.message).toBe("the upstream's result is a data: URL whose base64 is malformed");
    expect(fs.readdirSync(tmp)).toEqual([]);
  });
});
