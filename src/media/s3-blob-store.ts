import fs from 'node:fs';
import { type Readable, Transform, type TransformCallback } from 'node:stream';
import {
  CopyObjectCommand, DeleteObjectCommand, DeleteObjectsCommand, GetObjectCommand, HeadBucketCommand, HeadObjectCommand,
  ListObjectsV2Command, S3Client, S3ServiceException,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { S3Settings } from '../config.js';
import { assertSafeBlobPath, type BlobInfo, type BlobSource, type BlobStore, type ByteRange, isSafeBlobFolder } from './blob-store.js';

/** Parts of a multipart upload: at most PART_QUEUE of them are held at once, so one upload buffers at most 16 MiB. */
const PART_BYTES = 8 * 1_048_576;
const PART_QUEUE = 2;
/** Keys one DeleteObjects call removes (S3's maximum). */
const DELETE_BATCH = 1000;
/** A presigned URL is valid for at most 7 days (SigV4). */
const MAX_PRESIGN_SECONDS = 7 * 24 * 3600;
/** Bound on a readiness probe (HeadBucket), ms. */
const PING_TIMEOUT_MS = 5000;

/**
 * The one client of a process (credentials from the AWS SDK's chain: AWS_ACCESS_KEY_ID /
 * AWS_SECRET_ACCESS_KEY, AWS_PROFILE, web identity, container or instance roles; never from the
 * gateway's own settings, never logged). No socket idle timeout: a download to a slow client stops
 * reading from the bucket while the client catches up, and must not be cut for it.
 */
export function createS3Client(settings: S3Settings): S3Client {
  return new S3Client({
    ...(settings.endpoint !== undefined && { endpoint: settings.endpoint }),
    ...(settings.region !== undefined && { region: settings.region }),
    forcePathStyle: settings.forcePathStyle,
    requestHandler: { connectionTimeout: 5000, httpAgent: { keepAlive: true, maxSockets: 1024 }, httpsAgent: { keepAlive: true, maxSockets: 1024 } },
  });
}

/** S3 answered that the key (or bucket) is not there. */
function isNotFound(err: unknown): boolean {
  return err instanceof S3ServiceException && (err.name === 'NoSuchKey' || err.name === 'NotFound' || err.$metadata.httpStatusCode === 404);
}

/** Counts the bytes of a stream on its way to the bucket. */
class ByteCounter extends Transform {
  bytes = 0;

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.bytes += chunk.length;
    done(null, chunk);
  }
}

/**
 * Files in an S3-compatible bucket (G170): `<prefix><area>/<folder>/<name>`. Puts stream through
 * lib-storage's Upload (one PutObject below 8 MiB, else a multipart upload holding at most two
 * parts in memory, aborted on failure); reads are GetObject streams, ranged when asked; a folder is
 * removed by listing its keys and deleting them 1,000 at a time.
 */
export class S3BlobStore implements BlobStore {
  /** `prefix` is `''` or ends in `/`; `area` names this store's part of the bucket (`results`). */
  constructor(private readonly client: S3Client, readonly bucket: string, private readonly prefix: string, private readonly area: string) {}

  get location(): string {
    return `s3://${this.bucket}/${this.prefix}${this.area}/`;
  }

  /** The key of a file; throws on names that could leave the area. */
  keyOf(folder: string, name: string): string {
    assertSafeBlobPath(folder, name);
    return `${this.prefix}${this.area}/${folder}/${name}`;
  }

  async put(folder: string, name: string, source: BlobSource, options: { contentType?: string } = {}): Promise<number> {
    const key = this.keyOf(folder, name);
    let body: Buffer | Readable;
    let counter: ByteCounter | undefined;
    if ('data' in source) {
      body = source.data;
    } else {
      const input = 'stream' in source ? source.stream : fs.createReadStream(source.path);
      counter = new ByteCounter();
      input.on('error', (err: Error) => counter!.destroy(err));
      body = input.pipe(counter);
    }
    const upload = new Upload({
      client: this.client, partSize: PART_BYTES, queueSize: PART_QUEUE, leavePartsOnError: false,
      params: { Bucket: this.bucket, Key: key, Body: body, ...(options.contentType && { ContentType: options.contentType }) },
    });
    await upload.done();
    if ('path' in source) await fs.promises.rm(source.path, { force: true }); // moved in, as on disk
    return counter ? counter.bytes : (body as Buffer).length;
  }

  async stat(folder: string, name: string): Promise<BlobInfo | undefined> {
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.keyOf(folder, name) }));
      return { size: head.ContentLength ?? 0, lastModified: head.LastModified ?? new Date(0) };
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /** Waits for the bucket's answer, so a missing key is undefined rather than a stream error. */
  async read(folder: string, name: string, range?: ByteRange): Promise<Readable | undefined> {
    try {
      const got = await this.client.send(new GetObjectCommand({
        Bucket: this.bucket, Key: this.keyOf(folder, name), ...(range && { Range: `bytes=${range.start}-${range.end}` }),
      }));
      return got.Body as Readable;
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /** A server-side CopyObject from another area of the bucket; from anywhere else, a streamed copy. */
  async copyFrom(source: { store: BlobStore; folder: string; name: string }, folder: string, name: string): Promise<void> {
    if (source.store instanceof S3BlobStore && source.store.client === this.client) {
      await this.client.send(new CopyObjectCommand({
        Bucket: this.bucket, Key: this.keyOf(folder, name), CopySource: `${source.store.bucket}/${source.store.keyOf(source.folder, source.name)}`,
      }));
      return;
    }
    const stream = await source.store.read(source.folder, source.name);
    if (!stream) throw new Error(`the stored file ${source.folder}/${source.name} is gone from ${source.store.location}`);
    await this.put(folder, name, { stream });
  }

  async remove(folder: string, name: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.keyOf(folder, name) }));
  }

  /** Lists the folder's keys and deletes them, a batch at a time, until none is left. */
  async removeFolder(folder: string): Promise<void> {
    if (!isSafeBlobFolder(folder)) return;
    const prefix = `${this.prefix}${this.area}/${folder}/`;
    for (;;) {
      const listed = await this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, MaxKeys: DELETE_BATCH }));
      const keys = (listed.Contents ?? []).flatMap((o) => (o.Key ? [{ Key: o.Key }] : []));
      if (keys.length === 0) return;
      const deleted = await this.client.send(new DeleteObjectsCommand({ Bucket: this.bucket, Delete: { Objects: keys, Quiet: true } }));
      const failed = deleted.Errors ?? [];
      if (failed.length > 0) {
        throw new Error(`the bucket refused to delete ${failed.length} file(s) under ${prefix}: ${failed[0]!.Code ?? 'unknown'} ${failed[0]!.Message ?? ''}`.trim());
      }
    }
  }

  /** HeadBucket: the bucket exists and these credentials may use it. */
  async ping(): Promise<void> {
    await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }), { abortSignal: AbortSignal.timeout(PING_TIMEOUT_MS) });
  }

  /** A presigned GET valid until `expiresAtMs` (at most 7 days from now, SigV4's limit), served with `contentType`. */
  async presign(folder: string, name: string, expiresAtMs: number, contentType: string): Promise<string> {
    const seconds = Math.max(1, Math.min(MAX_PRESIGN_SECONDS, Math.floor((expiresAtMs - Date.now()) / 1000)));
    const command = new GetObjectCommand({ Bucket: this.bucket, Key: this.keyOf(folder, name), ResponseContentType: contentType });
    return getSignedUrl(this.client, command, { expiresIn: seconds });
  }
}
