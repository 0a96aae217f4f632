/**
 * The blob storage contract (G170): where the gateway keeps result files, its copies of
 * caller media and uploaded assets. One store is one area (a folder on disk, or a key prefix in a
 * bucket) holding `<folder>/<name>` files, a folder per task or asset. Files are written whole under
 * a name of their own and never changed in place, so a reader never sees half a file. Everything
 * streams: no implementation holds a whole file in memory.
 *
 * Implementations: fs-blob-store.ts (a local folder, the default) and s3-blob-store.ts (an
 * S3-compatible bucket); both pass test/cases/blob-store-contract.case.ts.
 */
import type { Readable } from 'node:stream';

/** What to store: bytes in memory, a file to move in (it is gone afterwards), or a stream read to its end. */
export type BlobSource = { data: Buffer } | { path: string } | { stream: Readable };

/** What a stored file is, for validators and lengths. */
export interface BlobInfo {
  size: number;
  /** When it was written (a bucket keeps whole seconds). */
  lastModified: Date;
}

/** Inclusive byte positions, as in `Range: bytes=start-end`. */
export interface ByteRange {
  start: number;
  end: number;
}

export interface BlobStore {
  /** Where this store keeps its files, for logs and errors: a folder, or `s3://bucket/prefix`. Never a credential. */
  readonly location: string;
  /** Stores a file under `folder/name` (replacing one of that name); returns its size in bytes. */
  put(folder: string, name: string, source: BlobSource, options?: { contentType?: string }): Promise<number>;
  /** The file's size and time, or undefined when there is none (nor anything but a file) under that name. */
  stat(folder: string, name: string): Promise<BlobInfo | undefined>;
  /** A stream of the file (or of `range` of it), or undefined when it is gone. */
  read(folder: string, name: string, range?: ByteRange): Promise<Readable | undefined>;
  /** Stores a copy of another store's file under `folder/name` (a link or a copy inside the same backend). */
  copyFrom(source: { store: BlobStore; folder: string; name: string }, folder: string, name: string): Promise<void>;
  /** Removes one file (missing is fine). */
  remove(folder: string, name: string): Promise<void>;
  /** Removes every file of a folder (a task's or an asset's; missing is fine). */
  removeFolder(folder: string): Promise<void>;
  /** Resolves when the storage can be reached and written; rejects saying why not (for /readyz). */
  ping(): Promise<void>;
  /**
   * A URL the storage itself serves the file at until `expiresAtMs` (a presigned GET), for the
   * redirect mode of /files (G173); only stores that can do it have it.
   */
  presign?(folder: string, name: string, expiresAtMs: number, contentType: string): Promise<string>;
}

const SAFE_SEGMENT = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/;

/** Folder and file names are one path segment each, of letters, digits, `.`, `_` and `-`, never `..` (so no name can leave its area). */
export function isSafeBlobPath(folder: string, name: string): boolean {
  return SAFE_SEGMENT.test(folder) && SAFE_SEGMENT.test(name) && !name.includes('..');
}

/** Throws on names that could leave the store's area. */
export function assertSafeBlobPath(folder: string, name: string): void {
  if (!isSafeBlobPath(folder, name)) throw new Error(`unsafe blob path ${folder}/${name}`);
}

/** A folder name is safe to remove (anything else names nothing the gateway stored). */
export const isSafeBlobFolder = (folder: string): boolean => SAFE_SEGMENT.test(folder);

/**
 * The whole file in memory, for a provider that sends media inline (base64 in a JSON body); throws
 * when it is gone. Stored media were bounded in size when they were reviewed.
 */
export async function readBlobBytes(store: BlobStore, folder: string, name: string): Promise<Buffer> {
  const stream = await store.read(folder, name);
  if (!stream) throw new Error(`the stored file ${folder}/${name} is gone from ${store.location}`);
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
