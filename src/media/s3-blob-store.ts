import fs from 'node:fs';
import { STATUS_CODES } from 'node:http';
import { type Readable, Transform, type TransformCallback } from 'node:stream';
import {
  CopyObjectCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { S3Settings } from '../config.js';
import { S3StorageError } from './s3-storage-error.js';
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

/** The clean form of whatever a bucket request threw (an abort or a network error keeps only its name and message). */
function storageError(err: unknown, operation: string, target: string): S3StorageError {
  if (err instanceof S3StorageError) return err;
  const e = err as Error & { $metadata?: { httpStatusCode?: number } };
  const status = err instanceof S3ServiceException ? err.$metadata?.httpStatusCode : undefined;
  const detail = e.message && e.message !== e.name && e.message !== 'UnknownError' ? e.message : '';
  // an answer without an error document (any HEAD) has no S3 error name: the HTTP reason stands in
  const code = e.name === 'Unknown' && status !== undefined ? (STATUS_CODES[status] ?? 'Unknown').replace(/\s+/g, '') : (e.name ?? 'Error');
  return new S3StorageError(operation, target, code, status, detail);
}

/** S3 answered that the key (or bucket) is not there. */
function isNotFound(err: S3StorageError): boolean {
  return err.code === 'NoSuchKey' || err.code === 'NotFound' || err.status === 404;
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
  constructor(
    private readonly client: S3Client,
    readonly bucket: string,
    private readonly prefix: string,
    private readonly area: string,
  ) {}

  /** Runs one bucket request; a failure becomes an S3StorageError naming it. */
  private async call<T>(operation: string, key: string, request: () => Promise<T>): Promise<T> {
    try {
      return await request();
    } catch (err) {
      throw storageError(err, operation, `s3://${this.bucket}/${key}`);
    }
  }

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
      client: this.client,
      partSize: PART_BYTES,
      queueSize: PART_QUEUE,
      leavePartsOnError: false,
      params: { Bucket: this.bucket, Key: key, Body: body, ...(options.contentType && { ContentType: options.contentType }) },
    });
    await this.call('upload', key, () => upload.done());
    if ('path' in source) await fs.promises.rm(source.path, { force: true }); // moved in, as on disk
    return counter ? counter.bytes : (body as Buffer).length;
  }

  async stat(folder: string, name: string): Promise<BlobInfo | undefined> {
    const key = this.keyOf(folder, name);
    try {
      const head = await this.call('HeadObject', key, () => this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key })));
      return { size: head.ContentLength ?? 0, lastModified: head.LastModified ?? new Date(0) };
    } catch (err) {
      if (isNotFound(err as S3StorageError)) return undefined;
      throw err;
    }
  }

  /** Waits for the bucket's answer, so a missing key is undefined rather than a stream error. */
  async read(folder: string, name: string, range?: ByteRange): Promise<Readable | undefined> {
    const key = this.keyOf(folder, name);
    try {
      const got = await this.call('GetObject', key, () =>
        this.client.send(
          new GetObjectCommand({
            Bucket: this.bucket,
            Key: key,
            ...(range && { Range: `bytes=${range.start}-${range.end}` }),
          }),
        ),
      );
      return got.Body as Readable;
    } catch (err) {
      if (isNotFound(err as S3StorageError)) return undefined;
      throw err;
    }
  }

  /** A server-side CopyObject from another area of the bucket; from anywhere else, a streamed copy. */
  async copyFrom(source: { store: BlobStore; folder: string; name: string }, folder: string, name: string): Promise<void> {
    if (source.store instanceof S3BlobStore && source.store.client === this.client) {
      const key = this.keyOf(folder, name);
      const from = `${source.store.bucket}/${source.store.keyOf(source.folder, source.name)}`;
      await this.call('CopyObject', key, () => this.client.send(new CopyObjectCommand({ Bucket: this.bucket, Key: key, CopySource: from })));
      return;
    }
    const stream = await source.store.read(source.folder, source.name);
    if (!stream) throw new Error(`the stored file ${source.folder}/${source.name} is gone from ${source.store.location}`);
    await this.put(folder, name, { stream });
  }

  async remove(folder: string, name: string): Promise<void> {
    const key = this.keyOf(folder, name);
    await this.call('DeleteObject', key, () => this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key })));
  }

  /** Lists the folder's keys and deletes them, a batch at a time, until none is left. */
  async removeFolder(folder: string): Promise<void> {
    if (!isSafeBlobFolder(folder)) return;
    const prefix = `${this.prefix}${this.area}/${folder}/`;
    for (;;) {
      const listed = await this.call('ListObjectsV2', prefix, () =>
        this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, MaxKeys: DELETE_BATCH })),
      );
      const keys = (listed.Contents ?? []).flatMap((o) => (o.Key ? [{ Key: o.Key }] : []));
      if (keys.length === 0) return;
      const deleted = await this.call('DeleteObjects', prefix, () =>
        this.client.send(new DeleteObjectsCommand({ Bucket: this.bucket, Delete: { Objects: keys, Quiet: true } })),
      );
      const failed = deleted.Errors ?? [];
      if (failed.length > 0) {
        throw new Error(
          `the bucket refused to delete ${failed.length} file(s) under ${prefix}: ${failed[0]!.Code ?? 'unknown'} ${failed[0]!.Message ?? ''}`.trim(),
        );
      }
    }
  }

  /** HeadBucket: the bucket exists and these credentials may use it. */
  async ping(): Promise<void> {
    await this.call('HeadBucket', '', () =>
      this.client.send(new HeadBucketCommand({ Bucket: this.bucket }), { abortSignal: AbortSignal.timeout(PING_TIMEOUT_MS) }),
    );
  }

  /** A presigned GET valid until `expiresAtMs` (at most 7 days from now, SigV4's limit), served with `contentType`. */
  async presign(folder: string, name: string, expiresAtMs: number, contentType: string): Promise<string> {
    const seconds = Math.max(1, Math.min(MAX_PRESIGN_SECONDS, Math.floor((expiresAtMs - Date.now()) / 1000)));
    const command = new GetObjectCommand({ Bucket: this.bucket, Key: this.keyOf(folder, name), ResponseContentType: contentType });
    return getSignedUrl(this.client, command, { expiresIn: seconds });
  }
}
