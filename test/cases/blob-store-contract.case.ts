/**
 * The blob store contract suite: the behaviour every `BlobStore` (src/media/blob-store.ts) must
 * have. It talks to the interface only, so it runs unchanged against the local folder and the S3
 * bucket. Run it from each implementation's test file: `runBlobStoreContract(name, open)`, where
 * `open` gives two fresh, empty areas of one backend (to copy between) and a third store of the
 * other backend (to copy across).
 */
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { BlobStore } from '../../src/media/blob-store.js';
import { readBlobBytes } from '../../src/media/blob-store.js';
import { tempDir } from '../helpers/temp-root.js';

export interface OpenedBlobStores {
  store: BlobStore;
  /** Another area of the same backend. */
  sibling: BlobStore;
  /** A store of the other backend. */
  foreign: BlobStore;
  close(): Promise<void>;
}

export type OpenBlobStores = () => Promise<OpenedBlobStores>;

const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

async function bytesOf(stream: Readable | undefined): Promise<Buffer | undefined> {
  if (!stream) return undefined;
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** A stream of `total` random bytes in 64 KiB chunks, and the digest of what it yields. */
function randomStream(total: number): { stream: Readable; digest: Promise<string> } {
  const hash = createHash('sha256');
  let sent = 0;
  let resolveDigest!: (d: string) => void;
  const digest = new Promise<string>((r) => {
    resolveDigest = r;
  });
  const stream = new Readable({
    read() {
      if (sent >= total) {
        resolveDigest(hash.digest('hex'));
        this.push(null);
        return;
      }
      const chunk = randomBytes(Math.min(65_536, total - sent));
      sent += chunk.length;
      hash.update(chunk);
      this.push(chunk);
    },
  });
  return { stream, digest };
}

export function runBlobStoreContract(name: string, open: OpenBlobStores): void {
  describe(`blob store contract: ${name}`, () => {
    let s: OpenedBlobStores;
    let scratch: string;
    beforeEach(async () => {
      s = await open();
      scratch = tempDir('blob-contract-');
    });
    afterEach(async () => {
      await s.close();
      fs.rmSync(scratch, { recursive: true, force: true });
    });

    it('stores bytes and answers them whole, their size and a time that stays the same', async () => {
      const data = Buffer.from('0123456789abcdef');
      const before = Date.now();
      expect(await s.store.put('task_a', 'image.1.png', { data }, { contentType: 'image/png' })).toBe(16);
      const info = await s.store.stat('task_a', 'image.1.png');
      expect(info?.size).toBe(16);
      expect(info!.lastModified.getTime()).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 - 2000);
      expect(await bytesOf(await s.store.read('task_a', 'image.1.png'))).toEqual(data);
      expect((await s.store.stat('task_a', 'image.1.png'))?.lastModified.getTime()).toBe(info!.lastModified.getTime());
      expect(await readBlobBytes(s.store, 'task_a', 'image.1.png')).toEqual(data);
    });

    it('answers byte ranges exactly, the last byte included', async () => {
      const data = Buffer.from('0123456789abcdef');
      await s.store.put('task_r', 'f.bin', { data });
      expect((await bytesOf(await s.store.read('task_r', 'f.bin', { start: 2, end: 4 })))!.toString()).toBe('234');
      expect((await bytesOf(await s.store.read('task_r', 'f.bin', { start: 15, end: 15 })))!.toString()).toBe('f');
      expect((await bytesOf(await s.store.read('task_r', 'f.bin', { start: 0, end: 15 })))!).toEqual(data);
    });

    it('moves a file in: its bytes are stored and the source file is gone', async () => {
      const file = path.join(scratch, 'made.mp4');
      const data = randomBytes(300_000);
      fs.writeFileSync(file, data);
      expect(await s.store.put('task_p', 'video.1.mp4', { path: file }, { contentType: 'video/mp4' })).toBe(300_000);
      expect(fs.existsSync(file)).toBe(false);
      expect(sha((await bytesOf(await s.store.read('task_p', 'video.1.mp4')))!)).toBe(sha(data));
    });

    it('stores a stream larger than one upload part (20 MiB) to its end, counting its bytes', async () => {
      const { stream, digest } = randomStream(20 * 1_048_576 + 12_345);
      expect(await s.store.put('task_s', 'video.2.mp4', { stream })).toBe(20 * 1_048_576 + 12_345);
      expect((await s.store.stat('task_s', 'video.2.mp4'))?.size).toBe(20 * 1_048_576 + 12_345);
      const hash = createHash('sha256');
      for await (const chunk of (await s.store.read('task_s', 'video.2.mp4'))!) hash.update(chunk as Buffer);
      expect(hash.digest('hex')).toBe(await digest);
    }, 60_000);

    it('a stream that fails half-way stores nothing under the name, and the put rejects', async () => {
      let sent = 0;
      const failing = new Readable({
        read() {
          if (sent >= 9 * 1_048_576) {
            this.destroy(new Error('the upstream hung up'));
            return;
          }
          sent += 1_048_576;
          this.push(Buffer.alloc(1_048_576, 1));
        },
      });
      await expect(s.store.put('task_f', 'video.3.mp4', { stream: failing })).rejects.toThrow();
      expect(await s.store.stat('task_f', 'video.3.mp4')).toBeUndefined();
      expect(await s.store.read('task_f', 'video.3.mp4')).toBeUndefined();
    }, 60_000);

    it('replaces a file stored again under the same name', async () => {
      await s.store.put('task_w', 'a.png', { data: Buffer.from('first') });
      await s.store.put('task_w', 'a.png', { data: Buffer.from('second!') });
      expect((await bytesOf(await s.store.read('task_w', 'a.png')))!.toString()).toBe('second!');
      expect((await s.store.stat('task_w', 'a.png'))?.size).toBe(7);
    });

    it('answers undefined for a missing file or folder, and removing one is fine', async () => {
      expect(await s.store.stat('task_none', 'a.png')).toBeUndefined();
      expect(await s.store.read('task_none', 'a.png')).toBeUndefined();
      expect(await s.store.read('task_none', 'a.png', { start: 0, end: 3 })).toBeUndefined();
      await s.store.remove('task_none', 'a.png');
      await s.store.removeFolder('task_none');
      await expect(readBlobBytes(s.store, 'task_none', 'a.png')).rejects.toThrow(/is gone/);
    });

    it('removes one file, or a whole folder, and nothing of another folder', async () => {
      for (const n of ['a.png', 'b.png', 'c.mp4']) await s.store.put('task_x', n, { data: Buffer.from(n) });
      await s.store.put('task_xy', 'a.png', { data: Buffer.from('keep') }); // a folder whose name starts the same
      await s.store.remove('task_x', 'b.png');
      expect(await s.store.stat('task_x', 'b.png')).toBeUndefined();
      expect(await s.store.stat('task_x', 'a.png')).toBeDefined();
      await s.store.removeFolder('task_x');
      for (const n of ['a.png', 'c.mp4']) expect(await s.store.stat('task_x', n)).toBeUndefined();
      expect((await bytesOf(await s.store.read('task_xy', 'a.png')))!.toString()).toBe('keep');
    });

    it('refuses names that could leave the area, and removes nothing for an unsafe folder', async () => {
      await s.store.put('task_safe', 'a.png', { data: Buffer.from('x') });
      for (const [folder, file] of [
        ['..', 'a.png'],
        ['task_safe', '../a.png'],
        ['task_safe', 'x/y.png'],
        ['', 'a.png'],
        ['task_safe', '.hidden'],
        ['task_safe', 'a..png'],
      ]) {
        await expect(s.store.put(folder!, file!, { data: Buffer.from('x') }), `${folder}/${file}`).rejects.toThrow(/unsafe blob path/);
        await expect(s.store.stat(folder!, file!), `${folder}/${file}`).rejects.toThrow(/unsafe blob path/);
      }
      await s.store.removeFolder('..');
      await s.store.removeFolder('');
      expect(await s.store.stat('task_safe', 'a.png')).toBeDefined();
    });

    it('copies a file from another area of the same backend, and from the other backend; the source stays', async () => {
      const data = randomBytes(70_000);
      await s.sibling.put('asset_1', 'asset.png', { data });
      await s.store.copyFrom({ store: s.sibling, folder: 'asset_1', name: 'asset.png' }, 'task_c', '0-images');
      expect(sha((await bytesOf(await s.store.read('task_c', '0-images')))!)).toBe(sha(data));
      expect(await s.sibling.stat('asset_1', 'asset.png')).toMatchObject({ size: 70_000 });
      // removing the copy leaves the source whole (a hard link shares the bytes, not the name)
      await s.store.removeFolder('task_c');
      expect(sha((await bytesOf(await s.sibling.read('asset_1', 'asset.png')))!)).toBe(sha(data));

      await s.foreign.put('asset_2', 'asset.mp4', { data });
      await s.store.copyFrom({ store: s.foreign, folder: 'asset_2', name: 'asset.mp4' }, 'task_c', '1-videos');
      expect(sha((await bytesOf(await s.store.read('task_c', '1-videos')))!)).toBe(sha(data));
      await expect(s.store.copyFrom({ store: s.sibling, folder: 'asset_9', name: 'gone.png' }, 'task_c', '2-images')).rejects.toThrow();
    });

    it('answers a ping', async () => {
      await expect(s.store.ping()).resolves.toBeUndefined();
    });
  });
}
