/**
 * The asset library behind `POST {base_url}/v2/model-center/assets` (the "asset upload API" of
 * interface.md): an upload (or a fetched `{url}`) is probed and reviewed against the widest Model
 * Center rules; an approved asset is kept for `ttlHours` and can be used by its owner as
 * `assetId://{id}` wherever a media URL is accepted. Per-key storage quota; size-bounded uploads.
 */
import type { Readable } from 'node:stream';
import type { Logger } from 'pino';
import { ASSET_LIMITS } from '../contract/media-limits.js';
import { AppError } from '../errors.js';
import { randomToken } from '../ids.js';
import type { AssetRecord, AssetStore } from '../store/types.js';
import type { FsBlobStore } from './blob-store.js';
import { checkMedium, type MediaFetcher } from './media-review.js';
import { probeMedia, ProbeError, type MediaFacts } from './probe.js';
import { sniffMediaKind } from './sniff.js';

export interface AssetServiceDeps {
  assets: AssetStore;
  files: FsBlobStore;
  fetch: MediaFetcher;
  tmpDir: string;
  maxBytes: number;
  quotaBytes: number;
  ttlHours: number;
}

const ROLE_OF_KIND = { image: 'images', video: 'videos', audio: 'audios' } as const;

export class AssetService {
  constructor(private readonly deps: AssetServiceDeps) {}

  /** Reads an uploaded file stream whole; more than `maxBytes` is a 413. */
  async readUpload(stream: Readable & { truncated?: boolean }): Promise<Buffer> {
    const parts: Buffer[] = [];
    let size = 0;
    for await (const chunk of stream) {
      size += (chunk as Buffer).length;
      if (size > this.deps.maxBytes) break;
      parts.push(chunk as Buffer);
    }
    if (size > this.deps.maxBytes || stream.truncated) {
      stream.resume();
      throw new AppError('body_too_large', `file: the upload is larger than ${this.deps.maxBytes} bytes (MEDIAGATE_ASSET_MAX_BYTES)`, { param: 'file' });
    }
    return Buffer.concat(parts);
  }

  /** Fetches `url` through the safe fetcher (any image, video or audio, up to `maxBytes`). */
  async fetchUrl(url: string, signal: AbortSignal): Promise<Buffer> {
    return this.deps.fetch(url, 'url', this.deps.maxBytes, (_type, first) => sniffMediaKind(first) !== undefined, signal);
  }

  /** Reviews and records an upload of `ownerKeyId`; a rejected asset is recorded (and answered) with its reason. */
  async create(ownerKeyId: string, bytes: Buffer, field: 'file' | 'url'): Promise<AssetRecord> {
    const now = Date.now();
    const id = `asset_${randomToken(16)}`;
    const base: AssetRecord = {
      id, ownerKeyId, status: 'rejected', reason: null, kind: null, format: null, width: null, height: null,
      duration: null, fps: null, bytes: bytes.length, file: null, createdAt: now, expiresAt: now + this.deps.ttlHours * 3_600_000,
    };
    const kind = bytes.length === 0 ? undefined : sniffMediaKind(bytes.subarray(0, 512));
    if (!kind) return this.record({ ...base, reason: `${field}: is not an image (jpeg, png, webp, bmp, tiff, gif, heic, heif), video (mp4, mov) or audio file (wav, mp3)` }, now);
    let facts: MediaFacts;
    try {
      facts = await probeMedia(bytes, kind, { tmpDir: this.deps.tmpDir });
    } catch (err) {
      if (!(err instanceof ProbeError)) throw err;
      return this.record({ ...base, kind, reason: `${field}: ${err.message}` }, now);
    }
    const described: AssetRecord = {
      ...base, kind, format: facts.format, width: facts.width ?? null, height: facts.height ?? null,
      duration: facts.duration ?? null, fps: facts.fps ?? null,
    };
    try {
      checkMedium(field, ROLE_OF_KIND[kind], facts, ASSET_LIMITS);
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      return this.record({ ...described, reason: err.message }, now);
    }
    const file = `asset.${facts.format}`;
    await this.deps.files.put(id, file, { data: bytes });
    const approved: AssetRecord = { ...described, status: 'approved', file };
    if (!this.deps.assets.insertWithinQuota(approved, this.deps.quotaBytes, now)) {
      await this.deps.files.removeTask(id);
      throw new AppError('asset_quota_exceeded', `This upload (${bytes.length} bytes) would take the key past its asset storage quota of ${this.deps.quotaBytes} bytes`, { param: field });
    }
    return approved;
  }

  /** The caller's asset, or 404. */
  get(ownerKeyId: string, id: string): AssetRecord {
    const asset = this.deps.assets.getOwned(id, ownerKeyId);
    if (!asset || asset.expiresAt <= Date.now()) throw new AppError('asset_id_not_found', `No asset with id ${id}`, { param: 'id' });
    return asset;
  }

  /** Deletes the caller's asset and its file at once (its quota share comes back); 404 when not the caller's. */
  async remove(ownerKeyId: string, id: string): Promise<void> {
    const asset = this.get(ownerKeyId, id);
    await this.deps.files.removeTask(asset.id);
    this.deps.assets.delete(asset.id);
  }

  /** Deletes expired assets and their files; returns how many. */
  async sweepExpired(log: Logger, now = Date.now()): Promise<number> {
    let handled = 0;
    for (;;) {
      const batch = this.deps.assets.listExpired(now, 200);
      if (batch.length === 0) return handled;
      for (const asset of batch) {
        await this.deps.files.removeTask(asset.id);
        this.deps.assets.delete(asset.id);
        handled++;
      }
      log.info({ count: batch.length }, 'retention: removed expired assets');
    }
  }

  private record(asset: AssetRecord, now: number): AssetRecord {
    this.deps.assets.insertWithinQuota(asset, this.deps.quotaBytes, now);
    return asset;
  }
}
