import fs from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { assertSafeBlobPath, type BlobInfo, type BlobSource, type BlobStore, type ByteRange, isSafeBlobFolder } from './blob-store.js';

const errnoOf = (err: unknown): string | undefined => (err as NodeJS.ErrnoException).code;
/** What a missing file (or a missing folder on the way to it) answers. */
const MISSING = new Set(['ENOENT', 'ENOTDIR', 'ENAMETOOLONG']);

/**
 * Files in a local folder: `<root>/<folder>/<name>` (the default storage, G170). Writes go to a
 * temporary name first and are renamed into place, so a reader never sees half a file and a crash
 * leaves no torn one; a file to store is moved in (a copy when it is on another device).
 */
export class FsBlobStore implements BlobStore {
  constructor(readonly root: string) {
    fs.mkdirSync(root, { recursive: true });
  }

  get location(): string {
    return this.root;
  }

  /** The path of a file; throws on names that could leave the root. */
  pathOf(folder: string, name: string): string {
    assertSafeBlobPath(folder, name);
    return path.join(this.root, folder, name);
  }

  async put(folder: string, name: string, source: BlobSource): Promise<number> {
    const target = this.pathOf(folder, name);
    await fs.promises.mkdir(path.dirname(target), { recursive: true });
    const tmp = `${target}.${process.pid}.${Date.now()}.tmp`;
    try {
      if ('data' in source) {
        await fs.promises.writeFile(tmp, source.data);
      } else if ('stream' in source) {
        await pipeline(source.stream, fs.createWriteStream(tmp, { flags: 'wx' }));
      } else {
        try {
          await fs.promises.rename(source.path, tmp);
        } catch (err) {
          if (errnoOf(err) !== 'EXDEV') throw err;
          await fs.promises.copyFile(source.path, tmp);
          await fs.promises.rm(source.path, { force: true });
        }
      }
      await fs.promises.rename(tmp, target);
    } catch (err) {
      await fs.promises.rm(tmp, { force: true });
      throw err;
    }
    return (await fs.promises.stat(target)).size;
  }

  async stat(folder: string, name: string): Promise<BlobInfo | undefined> {
    try {
      const file = this.pathOf(folder, name);
      const stat = await new Promise<fs.Stats>((resolve, reject) => {
        fs.stat(file, (err, st) => (err ? reject(err) : resolve(st)));
      });
      return stat.isFile() ? { size: stat.size, lastModified: stat.mtime } : undefined;
    } catch (err) {
      if (MISSING.has(errnoOf(err) ?? '')) return undefined;
      throw err;
    }
  }

  /**
   * Opens the file before answering, so a file removed later still streams whole (and a missing one
   * is undefined, not a stream error). The callback API: FileHandle streams cost a third of the
   * throughput of small ranged downloads.
   */
  async read(folder: string, name: string, range?: ByteRange): Promise<Readable | undefined> {
    const file = this.pathOf(folder, name);
    let fd: number;
    try {
      fd = await new Promise<number>((resolve, reject) => {
        fs.open(file, 'r', (err, opened) => (err ? reject(err) : resolve(opened)));
      });
    } catch (err) {
      if (MISSING.has(errnoOf(err) ?? '') || errnoOf(err) === 'EISDIR') return undefined;
      throw err;
    }
    const isFile = await new Promise<boolean>((resolve) => {
      fs.fstat(fd, (err, stat) => resolve(!err && stat.isFile()));
    });
    if (!isFile) {
      fs.close(fd, () => undefined);
      return undefined;
    }
    return fs.createReadStream(file, { fd, ...(range && { start: range.start, end: range.end }), autoClose: true });
  }

  /** A hard link from a file of another folder store (a copy across devices), else a streamed copy. */
  async copyFrom(source: { store: BlobStore; folder: string; name: string }, folder: string, name: string): Promise<void> {
    if (!(source.store instanceof FsBlobStore)) {
      const stream = await source.store.read(source.folder, source.name);
      if (!stream) throw new Error(`the stored file ${source.folder}/${source.name} is gone from ${source.store.location}`);
      await this.put(folder, name, { stream });
      return;
    }
    const from = source.store.pathOf(source.folder, source.name);
    const target = this.pathOf(folder, name);
    await fs.promises.mkdir(path.dirname(target), { recursive: true });
    try {
      await fs.promises.link(from, target);
    } catch (err) {
      if (errnoOf(err) === 'ENOENT') throw err;
      if (errnoOf(err) === 'EEXIST') await fs.promises.rm(target, { force: true });
      await fs.promises.copyFile(from, target);
    }
  }

  async remove(folder: string, name: string): Promise<void> {
    await fs.promises.rm(this.pathOf(folder, name), { force: true });
  }

  async removeFolder(folder: string): Promise<void> {
    if (!isSafeBlobFolder(folder)) return;
    await fs.promises.rm(path.join(this.root, folder), { recursive: true, force: true });
  }

  /** The folder exists (made again if someone removed it) and this process may write it. */
  async ping(): Promise<void> {
    await fs.promises.mkdir(this.root, { recursive: true });
    await fs.promises.access(this.root, fs.constants.W_OK);
  }
}
