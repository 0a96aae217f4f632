/**
 * The asset library behind `POST {base_url}/v2/model-center/assets` (the asset upload API,
 * docs/reference/api/media.md#assets): an upload (or a fetched `{url}`) is probed and reviewed against the widest Model
 * Center rules; an approved asset is kept for `ttlHours` and can be used by its owner as
 * `assetId://{id}` wherever a media URL is accepted. Per-key storage quota; size-bounded uploads.
 *
 * Uploads and fetched URLs stream to a file in the tmp folder, are probed from it and, once
 * approved, renamed into `<data>/assets/<id>/`; receiving and checking one takes a slot and a byte
 * reservation of the key, like media review (media-admission.ts; G100, G101).
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { type Readable, Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Logger } from 'pino';
import { ASSET_LIMITS } from '../contract/media-limits.js';
import { AppError } from '../errors.js';
import { randomToken } from '../ids.js';
import type { AssetRecord, AssetStore } from '../store/types.js';
import type { BlobStore } from './blob-store.js';
import { MEDIA_FORMATS } from './formats.js';
import { AdmissionQueueFull, type MediaAdmission } from './media-admission.js';
import { checkMedium, type MediaFileFetcher, mediaQueueFull } from './media-review.js';
import { probeFile, ProbeError } from './probe.js';
import type { MediaFacts } from './media-facts.js';
import { SNIFF_BYTES } from './safe-fetch.js';
import { sniffMediaKind } from './sniff.js';

export interface AssetServiceDeps {
  assets: AssetStore;
  files: BlobStore;
  fetch: MediaFileFetcher;
  /** Slots and bytes for fetching and checking, fair between keys (shared with media review). */
  admission: MediaAdmission;
  /** Where uploads are received (`<data>/tmp`, on the same device as `files`). */
  tmpDir: string;
  maxBytes: number;
  quotaBytes: number;
  ttlHours: number;
  /** Bound on waiting for a slot and fetching a `{url}`, ms. */
  timeoutMs: number;
}

/** A received medium in the tmp folder. */
interface ReceivedFile {
  path: string;
  bytes: number;
  /** Its first bytes, for the kind sniff. */
  head: Buffer;
}

const ROLE_OF_KIND = { image: 'images', video: 'videos', audio: 'audios' } as const;

export class AssetService {
  constructor(private readonly deps: AssetServiceDeps) {}

  /**
   * Receives a multipart file stream of `ownerKeyId` to disk and reviews it. `declared` is the
   * request's Content-Length (the reservation when smaller than the limit). More than `maxBytes`
   * is a 413.
   */
  async upload(ownerKeyId: string, stream: Readable & { truncated?: boolean }, declared: number | undefined): Promise<AssetRecord> {
    const reserve = declared !== undefined && Number.isSafeInteger(declared) && declared >= 0 ? Math.min(declared, this.deps.maxBytes) : this.deps.maxBytes;
    const waiting = AbortSignal.timeout(this.deps.timeoutMs);
    try {
      return await this.deps.admission.run(
        ownerKeyId,
        reserve,
        async () => {
          const file = await this.receive(stream);
          try {
            return await this.create(ownerKeyId, file, 'file');
          } finally {
            await fs.promises.rm(file.path, { force: true });
          }
        },
        waiting,
      );
    } catch (err) {
      stream.resume(); // whatever is left of the upload is read and dropped
      throw this.admissionFailure(err, 'file', waiting);
    }
  }

  /** Fetches `url` through the safe fetcher (any image, video or audio, up to `maxBytes`) and reviews it. */
  async fromUrl(ownerKeyId: string, url: string): Promise<AssetRecord> {
    const signal = AbortSignal.timeout(this.deps.timeoutMs);
    try {
      return await this.deps.admission.run(
        ownerKeyId,
        this.deps.maxBytes,
        async (reservation) => {
          const fetched = await this.deps.fetch({
            url,
            field: 'url',
            maxBytes: this.deps.maxBytes,
            signal,
            accept: (_type, first) => sniffMediaKind(first) !== undefined,
            onLength: (declared) => {
              if (declared !== undefined) reservation.shrink(declared);
            },
          });
          try {
            return await this.create(ownerKeyId, fetched, 'url');
          } finally {
            await fs.promises.rm(fetched.path, { force: true });
          }
        },
        signal,
      );
    } catch (err) {
      throw this.admissionFailure(err, 'url', signal);
    }
  }

  /** A full queue is a 429 naming the field; running out of time a 400 `media_fetch_failed`. */
  private admissionFailure(err: unknown, field: 'file' | 'url', signal: AbortSignal): unknown {
    if (err instanceof AdmissionQueueFull) return mediaQueueFull(field, err);
    if (signal.aborted && err === signal.reason) {
      return new AppError(
        'media_fetch_failed',
        `${field}: receiving and checking this medium took longer than ${Math.round(this.deps.timeoutMs / 1000)} s (MEDIAGATE_MEDIA_REVIEW_TIMEOUT_MS); retry later`,
        { param: field, retryable: true },
      );
    }
    return err;
  }

  /** Writes an upload stream to a new file of the tmp folder; more than `maxBytes` is a 413 and leaves nothing. */
  private async receive(stream: Readable & { truncated?: boolean }): Promise<ReceivedFile> {
    const file = path.join(this.deps.tmpDir, `upload-${randomUUID()}.part`);
    const meter = new UploadMeter(this.deps.maxBytes);
    // the file is made before anything is read: a stream's lazy open could otherwise make it after
    // the removal below, when the upload fails at once (a body cut short)
    const handle = await fs.promises.open(file, 'wx');
    try {
      await pipeline(stream, meter, handle.createWriteStream());
      if (meter.over || stream.truncated) {
        throw new AppError('body_too_large', `file: the upload is larger than ${this.deps.maxBytes} bytes (MEDIAGATE_ASSET_MAX_BYTES)`, { param: 'file' });
      }
      return { path: file, bytes: meter.total, head: meter.head() };
    } catch (err) {
      await handle.close().catch(() => undefined); // closed already unless the pipeline failed before it was used
      await fs.promises.rm(file, { force: true });
      throw err;
    }
  }

  /** Reviews and records a received medium of `ownerKeyId`; a rejected asset is recorded (and answered) with its reason. */
  private async create(ownerKeyId: string, received: ReceivedFile, field: 'file' | 'url'): Promise<AssetRecord> {
    const now = Date.now();
    const id = `asset_${randomToken(16)}`;
    const base: AssetRecord = {
      id,
      ownerKeyId,
      status: 'rejected',
      reason: null,
      kind: null,
      format: null,
      width: null,
      height: null,
      duration: null,
      fps: null,
      bytes: received.bytes,
      file: null,
      createdAt: now,
      expiresAt: now + this.deps.ttlHours * 3_600_000,
    };
    const kind = received.bytes === 0 ? undefined : sniffMediaKind(received.head);
    if (!kind)
      return this.record(
        { ...base, reason: `${field}: is not an image (jpeg, png, webp, bmp, tiff, gif, heic, heif), video (mp4, mov) or audio file (wav, mp3)` },
        now,
      );
    let facts: MediaFacts;
    try {
      facts = await probeFile(received.path, kind);
    } catch (err) {
      if (!(err instanceof ProbeError)) throw err;
      return this.record({ ...base, kind, reason: `${field}: ${err.message}` }, now);
    }
    const described: AssetRecord = {
      ...base,
      kind,
      format: facts.format,
      width: facts.width ?? null,
      height: facts.height ?? null,
      duration: facts.duration ?? null,
      fps: facts.fps ?? null,
    };
    try {
      checkMedium(field, ROLE_OF_KIND[kind], facts, ASSET_LIMITS);
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      return this.record({ ...described, reason: err.message }, now);
    }
    const file = `asset.${facts.format}`;
    await this.deps.files.put(id, file, { path: received.path }, MEDIA_FORMATS[facts.format] ? { contentType: MEDIA_FORMATS[facts.format]!.contentType } : {});
    const approved: AssetRecord = { ...described, status: 'approved', file };
    if (!(await this.deps.assets.insertWithinQuota(approved, this.deps.quotaBytes, now))) {
      await this.deps.files.removeFolder(id);
      throw new AppError(
        'asset_quota_exceeded',
        `This upload (${received.bytes} bytes) would take the key past its asset storage quota of ${this.deps.quotaBytes} bytes`,
        { param: field },
      );
    }
    return approved;
  }

  /** The caller's asset, or 404. */
  async get(ownerKeyId: string, id: string): Promise<AssetRecord> {
    const asset = await this.deps.assets.getOwned(id, ownerKeyId);
    if (!asset || asset.expiresAt <= Date.now()) throw new AppError('asset_id_not_found', `No asset with id ${id}`, { param: 'id' });
    return asset;
  }

  /** Deletes the caller's asset and its file at once (its quota share comes back); 404 when not the caller's. */
  async remove(ownerKeyId: string, id: string): Promise<void> {
    const asset = await this.get(ownerKeyId, id);
    await this.deps.files.removeFolder(asset.id);
    await this.deps.assets.delete(asset.id);
  }

  /** Deletes expired assets and their files; returns how many. */
  async sweepExpired(log: Logger, now = Date.now()): Promise<number> {
    let handled = 0;
    for (;;) {
      const batch = await this.deps.assets.listExpired(now, 200);
      if (batch.length === 0) return handled;
      for (const asset of batch) {
        await this.deps.files.removeFolder(asset.id);
        await this.deps.assets.delete(asset.id);
        handled++;
      }
      log.info({ count: batch.length }, 'retention: removed expired assets');
    }
  }

  private async record(asset: AssetRecord, now: number): Promise<AssetRecord> {
    await this.deps.assets.insertWithinQuota(asset, this.deps.quotaBytes, now);
    return asset;
  }
}

/** Counts an upload on its way to disk, keeps its first bytes, and drops (but keeps reading) what is past `maxBytes`. */
class UploadMeter extends Transform {
  total = 0;
  over = false;
  private readonly first: Buffer[] = [];
  private firstLength = 0;

  constructor(private readonly maxBytes: number) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.total += chunk.length;
    if (this.firstLength < SNIFF_BYTES) {
      this.first.push(chunk);
      this.firstLength += chunk.length;
    }
    if (this.total > this.maxBytes) {
      this.over = true;
      done();
      return;
    }
    done(null, chunk);
  }

  head(): Buffer {
    return Buffer.concat(this.first).subarray(0, SNIFF_BYTES);
  }
}
