/**
 * Submit-time review of a task's caller media: every URL is fetched once (safe fetcher), every
 * `assetId://` resolved to the caller's approved asset, each file probed and checked against the
 * family's limits, totals checked per field; the bytes are kept in the task's input folder so the
 * provider never downloads them again. A bad medium is a 400 naming its field, index and rule.
 */
import fs from 'node:fs';
import path from 'node:path';
import { allRefs, type MediaRef, type MediaRefs } from '../contract/media-refs.js';
import type { ImageLimits, MediaLimits } from '../contract/media-limits.js';
import { AppError } from '../errors.js';
import { createLimiter, type Limiter } from '../limiter.js';
import type { AssetRecord, AssetStore } from '../store/types.js';
import type { FsBlobStore } from './blob-store.js';
import { checkAudio, checkImage, checkTotals, checkVideo, invalidMedia } from './media-check.js';
import { probeMedia, ProbeError, type MediaFacts, type MediaKind } from './probe.js';
import { looksLike } from './sniff.js';

export const ASSET_SCHEME = 'assetId://';

/** Fetches a caller URL (public addresses only unless configured), checking the first bytes with `accept`. */
export type MediaFetcher = (url: string, field: string, maxBytes: number, accept: (contentType: string, first: Buffer) => boolean, signal: AbortSignal) => Promise<Buffer>;

export interface MediaReviewDeps {
  fetch: MediaFetcher;
  /** `<data>/inputs`: one folder per task. */
  inputs: FsBlobStore;
  assets: AssetStore;
  /** `<data>/assets`: one folder per asset. */
  assetFiles: FsBlobStore;
  tmpDir: string;
  /** Bound on the whole review of one submit. */
  timeoutMs: number;
  /** Media fetched and probed at once, process-wide. */
  concurrency?: number;
}

const KIND_OF_ROLE = { frames: 'image', images: 'image', videos: 'video', audios: 'audio' } as const;
const ROLE_WORDS = { images: 'reference images', videos: 'reference videos', audios: 'reference audios' } as const;

/** The field name without its index (`referenceVideos[1]` -> `referenceVideos`). */
const fieldName = (field: string): string => field.replace(/\[\d+\]$/, '');

/** The limit a role's files are checked against, by kind. */
function maxBytesOf(limits: MediaLimits, role: keyof typeof KIND_OF_ROLE): number {
  const l = role === 'frames' ? limits.frames : role === 'images' ? limits.images : role === 'videos' ? limits.videos : limits.audios;
  return l?.maxBytes ?? limits.images.maxBytes;
}

/** Checks probed facts of one medium of `role` against `limits`. */
export function checkMedium(field: string, role: keyof typeof KIND_OF_ROLE, facts: MediaFacts, limits: MediaLimits): void {
  if (role === 'frames' || role === 'images') checkImage(field, facts, (role === 'frames' ? limits.frames : limits.images) as ImageLimits);
  else if (role === 'videos') {
    if (!limits.videos) throw invalidMedia(field, 'videos are not accepted here');
    checkVideo(field, facts, limits.videos);
  } else {
    if (!limits.audios) throw invalidMedia(field, 'audio is not accepted here');
    checkAudio(field, facts, limits.audios);
  }
}

export function assetFacts(a: AssetRecord): MediaFacts {
  const facts: MediaFacts = { kind: a.kind ?? 'image', format: a.format ?? 'unknown', bytes: a.bytes };
  if (a.width !== null) facts.width = a.width;
  if (a.height !== null) facts.height = a.height;
  if (a.duration !== null) facts.duration = a.duration;
  if (a.fps !== null) facts.fps = a.fps;
  return facts;
}

export class MediaReviewer {
  private readonly slots: Limiter;

  constructor(private readonly deps: MediaReviewDeps) {
    this.slots = createLimiter(deps.concurrency ?? 4);
  }

  /**
   * Reviews every medium of a new task and keeps the files under `inputs/<taskId>/`; returns the
   * refs with `stored` and `facts` set. On any failure nothing is kept and the error is thrown.
   */
  async review(taskId: string, ownerKeyId: string, media: MediaRefs, limits: MediaLimits): Promise<MediaRefs> {
    const items = allRefs(media);
    if (items.length === 0) return media;
    const timeout = AbortSignal.timeout(this.deps.timeoutMs);
    const failFast = new AbortController();
    const signal = AbortSignal.any([timeout, failFast.signal]);
    const running = items.map(async ({ role, ref }, i) => {
      try {
        return await this.slots.run(() => this.reviewOne(taskId, ownerKeyId, role, ref, i, limits, signal), signal);
      } catch (err) {
        failFast.abort(err); // the others stop fetching
        throw err;
      }
    });
    try {
      const reviewed = await Promise.all(running);
      for (const role of ['images', 'videos', 'audios'] as const) {
        const ofRole = reviewed.filter((_, i) => items[i]!.role === role);
        const roleLimits = role === 'images' ? undefined : limits[role];
        if (ofRole.length > 0 && roleLimits) checkTotals(fieldName(ofRole[0]!.field), ROLE_WORDS[role], ofRole.map((r) => r.facts as MediaFacts), roleLimits);
      }
      const byRef = new Map(items.map((item, i) => [item.ref, reviewed[i]!]));
      const pick = (r: MediaRef): MediaRef => byRef.get(r) ?? r;
      return {
        ...(media.firstFrame && { firstFrame: pick(media.firstFrame) }),
        ...(media.lastFrame && { lastFrame: pick(media.lastFrame) }),
        images: media.images.map(pick), videos: media.videos.map(pick), audios: media.audios.map(pick),
      };
    } catch (err) {
      await Promise.allSettled(running); // none still writing into the folder about to go
      await this.deps.inputs.removeTask(taskId).catch(() => undefined);
      if (timeout.aborted && !(err instanceof AppError && err.code !== 'media_fetch_failed')) {
        throw new AppError('media_fetch_failed', `Fetching and checking the media of this request took longer than ${Math.round(this.deps.timeoutMs / 1000)} s; use faster hosting or upload them as assets`);
      }
      throw err;
    }
  }

  private async reviewOne(taskId: string, ownerKeyId: string, role: keyof typeof KIND_OF_ROLE, ref: MediaRef, index: number, limits: MediaLimits, signal: AbortSignal): Promise<MediaRef> {
    const kind: MediaKind = KIND_OF_ROLE[role];
    const name = `${index}-${role}`;
    let facts: MediaFacts;
    if (ref.url.startsWith(ASSET_SCHEME)) {
      const asset = this.ownedAsset(ref, ownerKeyId);
      if (asset.kind !== kind) throw invalidMedia(ref.field, `${ref.url} is ${asset.kind === 'audio' ? 'an' : 'a'} ${asset.kind}, not ${kind === 'image' ? 'an' : 'a'} ${kind}`);
      facts = assetFacts(asset);
      checkMedium(ref.field, role, facts, limits);
      await linkOrCopy(this.deps.assetFiles.pathOf(asset.id, asset.file!), this.deps.inputs, taskId, name);
    } else {
      const bytes = await this.deps.fetch(ref.url, ref.field, maxBytesOf(limits, role), (_type, first) => looksLike(kind, first), signal);
      try {
        facts = await probeMedia(bytes, kind, { signal, tmpDir: this.deps.tmpDir });
      } catch (err) {
        if (err instanceof ProbeError) throw invalidMedia(ref.field, err.message);
        throw err;
      }
      checkMedium(ref.field, role, facts, limits);
      await this.deps.inputs.put(taskId, name, { data: bytes });
    }
    return { ...ref, stored: name, facts };
  }

  /** Removes the reviewed copies of a task (it was not stored after all). */
  async discard(taskId: string): Promise<void> {
    await this.deps.inputs.removeTask(taskId);
  }

  /** The caller's approved, unexpired asset behind an `assetId://` ref, or a 400 naming the field. */
  private ownedAsset(ref: MediaRef, ownerKeyId: string): AssetRecord {
    const id = ref.url.slice(ASSET_SCHEME.length);
    const asset = this.deps.assets.getOwned(id, ownerKeyId);
    if (!asset || asset.expiresAt <= Date.now()) {
      throw new AppError('asset_not_found', `${ref.field}: ${ref.url} is not an asset of this API key (unknown, another key's, or expired)`, { param: ref.field });
    }
    if (asset.status !== 'approved' || !asset.file) {
      throw new AppError('asset_not_found', `${ref.field}: ${ref.url} was rejected by review (${asset.reason ?? 'no reason'}); only approved assets can be used`, { param: ref.field });
    }
    return asset;
  }
}

/** A hard link from the asset's file into the task's inputs (a copy across devices). */
async function linkOrCopy(source: string, inputs: FsBlobStore, taskId: string, name: string): Promise<void> {
  const target = inputs.pathOf(taskId, name);
  await fs.promises.mkdir(path.dirname(target), { recursive: true });
  try {
    await fs.promises.link(source, target);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw err;
    await fs.promises.copyFile(source, target);
  }
}
