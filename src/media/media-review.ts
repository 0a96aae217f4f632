/**
 * Submit-time review of a task's caller media: every URL is fetched once (safe fetcher), every
 * `assetId://` resolved to the caller's approved asset, each file probed and checked against the
 * family's limits, totals checked per field; the files are kept in the task's input folder so the
 * provider never downloads them again. A bad medium is a 400 naming its field, index and rule.
 *
 * A fetched medium streams to a file in the tmp folder, is probed from that file and, once it
 * passed, renamed into `inputs/<task>/`: no medium is ever held in memory. Fetching and checking
 * take a slot and a byte reservation of the owner's key (media-admission.ts; G100, G101).
 */
import fs from 'node:fs';
import { allRefs, type MediaRef, type MediaRefs } from '../contract/media-refs.js';
import type { ImageLimits, MediaLimits } from '../contract/media-limits.js';
import { AppError } from '../errors.js';
import type { AssetRecord, AssetStore } from '../store/types.js';
import type { BlobStore } from './blob-store.js';
import { AdmissionQueueFull, type MediaAdmission } from './media-admission.js';
import { checkAudio, checkImage, checkTotals, checkVideo, invalidMedia } from './media-check.js';
import { probeFile, ProbeError } from './probe.js';
import type { MediaFacts, MediaKind } from './media-facts.js';
import type { FetchedFile } from './safe-fetch.js';
import { MEDIA_FORMATS } from './formats.js';
import { looksLike } from './sniff.js';

export const ASSET_SCHEME = 'assetId://';

/** What {@link MediaFileFetcher} is asked to fetch. */
export interface MediaFetchRequest {
  url: string;
  /** The request field, for errors. */
  field: string;
  maxBytes: number;
  /** Checks the content type and first bytes as soon as they arrive. */
  accept: (contentType: string, first: Buffer) => boolean;
  signal: AbortSignal;
  /** Told the Content-Length before the body is read (undefined when there is none). */
  onLength?: (declared: number | undefined) => void;
}

/**
 * Fetches a caller URL (public addresses only unless configured) into a new file of the tmp
 * folder, which the caller then owns; nothing is left behind when it fails.
 */
export type MediaFileFetcher = (request: MediaFetchRequest) => Promise<FetchedFile>;

export interface MediaReviewDeps {
  fetch: MediaFileFetcher;
  /** `<data>/inputs`: one folder per task. */
  inputs: BlobStore;
  assets: AssetStore;
  /** `<data>/assets`: one folder per asset. */
  assetFiles: BlobStore;
  /** Slots and bytes for fetching and checking, fair between keys (shared with the asset service). */
  admission: MediaAdmission;
  /** Bound on the whole review of one submit. */
  timeoutMs: number;
}

/** Seconds a caller is asked to wait when its key has too many media waiting (`Retry-After`). */
export const MEDIA_QUEUE_RETRY_AFTER_SECONDS = 5;

/** The 429 for a key whose media queue is full, naming the field that did not get in. */
export function mediaQueueFull(field: string, err: AdmissionQueueFull): AppError {
  return new AppError(
    'rate_limited',
    `${field}: this API key already has ${err.limit} media waiting to be fetched and checked; retry after ${MEDIA_QUEUE_RETRY_AFTER_SECONDS} s`,
    { param: field, headers: { 'retry-after': String(MEDIA_QUEUE_RETRY_AFTER_SECONDS) } },
  );
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
  constructor(private readonly deps: MediaReviewDeps) {}

  /**
   * Reviews every medium of a new task and keeps the files under `inputs/<taskId>/`; returns the
   * refs with `stored` and `facts` set. On any failure nothing is kept and the error is thrown.
   */
  async review(taskId: string, ownerKeyId: string, media: MediaRefs, limits: MediaLimits): Promise<MediaRefs> {
    const items = allRefs(media);
    if (items.length === 0) return media;
    // more URLs than the key may have fetched or waiting at once would be a 429 on every retry: a 400
    const fetched = items.filter(({ ref }) => !ref.url.startsWith(ASSET_SCHEME));
    const most = this.deps.admission.keyMost;
    if (fetched.length > most) {
      const field = fetched[most]!.ref.field;
      throw new AppError(
        'invalid_request',
        `${field}: one request may carry at most ${most} media URLs to fetch (this one has ${fetched.length}); send the others as uploaded assets (assetId://) or in another request`,
        { param: field },
      );
    }
    const timeout = AbortSignal.timeout(this.deps.timeoutMs);
    const failFast = new AbortController();
    const signal = AbortSignal.any([timeout, failFast.signal]);
    const running = items.map(async ({ role, ref }, i) => {
      try {
        if (ref.url.startsWith(ASSET_SCHEME)) return await this.linkAsset(taskId, ownerKeyId, role, ref, i, limits);
        return await this.deps.admission.run(
          ownerKeyId,
          maxBytesOf(limits, role),
          (reservation) =>
            this.fetchOne(taskId, role, ref, i, limits, signal, (declared) => {
              if (declared !== undefined) reservation.shrink(declared);
            }),
          signal,
        );
      } catch (err) {
        const failure = err instanceof AdmissionQueueFull ? mediaQueueFull(ref.field, err) : err;
        failFast.abort(failure); // the others stop fetching (or waiting)
        throw failure;
      }
    });
    try {
      const reviewed = await Promise.all(running);
      for (const role of ['images', 'videos', 'audios'] as const) {
        const ofRole = reviewed.filter((_, i) => items[i]!.role === role);
        const roleLimits = role === 'images' ? undefined : limits[role];
        if (ofRole.length > 0 && roleLimits)
          checkTotals(
            fieldName(ofRole[0]!.field),
            ROLE_WORDS[role],
            ofRole.map((r) => r.facts as MediaFacts),
            roleLimits,
          );
      }
      const byRef = new Map(items.map((item, i) => [item.ref, reviewed[i]!]));
      const pick = (r: MediaRef): MediaRef => byRef.get(r) ?? r;
      return {
        ...(media.firstFrame && { firstFrame: pick(media.firstFrame) }),
        ...(media.lastFrame && { lastFrame: pick(media.lastFrame) }),
        images: media.images.map(pick),
        videos: media.videos.map(pick),
        audios: media.audios.map(pick),
      };
    } catch (err) {
      await Promise.allSettled(running); // none still writing into the folder about to go
      await this.deps.inputs.removeFolder(taskId).catch(() => undefined);
      if (timeout.aborted && !(err instanceof AppError && err.code !== 'media_fetch_failed')) {
        throw new AppError(
          'media_fetch_failed',
          `Fetching and checking the media of this request took longer than ${Math.round(this.deps.timeoutMs / 1000)} s; use faster hosting or upload them as assets`,
        );
      }
      throw err;
    }
  }

  /** An `assetId://` ref: the owner's approved asset, checked against the family, linked into the task. */
  private async linkAsset(
    taskId: string,
    ownerKeyId: string,
    role: keyof typeof KIND_OF_ROLE,
    ref: MediaRef,
    index: number,
    limits: MediaLimits,
  ): Promise<MediaRef> {
    const kind: MediaKind = KIND_OF_ROLE[role];
    const name = `${index}-${role}`;
    const asset = await this.ownedAsset(ref, ownerKeyId);
    if (asset.kind !== kind)
      throw invalidMedia(ref.field, `${ref.url} is ${asset.kind === 'audio' ? 'an' : 'a'} ${asset.kind}, not ${kind === 'image' ? 'an' : 'a'} ${kind}`);
    const facts = assetFacts(asset);
    checkMedium(ref.field, role, facts, limits);
    await this.deps.inputs.copyFrom({ store: this.deps.assetFiles, folder: asset.id, name: asset.file! }, taskId, name);
    return { ...ref, stored: name, facts };
  }

  /** A URL: fetched to a file, probed from it, checked, and moved into the task's inputs. */
  private async fetchOne(
    taskId: string,
    role: keyof typeof KIND_OF_ROLE,
    ref: MediaRef,
    index: number,
    limits: MediaLimits,
    signal: AbortSignal,
    onLength: (declared: number | undefined) => void,
  ): Promise<MediaRef> {
    const kind: MediaKind = KIND_OF_ROLE[role];
    const name = `${index}-${role}`;
    const fetched = await this.deps.fetch({
      url: ref.url,
      field: ref.field,
      maxBytes: maxBytesOf(limits, role),
      accept: (_type, first) => looksLike(kind, first),
      signal,
      onLength,
    });
    try {
      let facts: MediaFacts;
      try {
        facts = await probeFile(fetched.path, kind, { signal });
      } catch (err) {
        if (err instanceof ProbeError) throw invalidMedia(ref.field, err.message);
        throw err;
      }
      checkMedium(ref.field, role, facts, limits);
      await this.deps.inputs.put(taskId, name, { path: fetched.path }, storedType(facts));
      return { ...ref, stored: name, facts };
    } finally {
      await fs.promises.rm(fetched.path, { force: true }); // gone already when it was moved
    }
  }

  /** Removes the reviewed copies of a task (it was not stored after all). */
  async discard(taskId: string): Promise<void> {
    await this.deps.inputs.removeFolder(taskId);
  }

  /** The caller's approved, unexpired asset behind an `assetId://` ref, or a 400 naming the field. */
  private async ownedAsset(ref: MediaRef, ownerKeyId: string): Promise<AssetRecord> {
    const asset = await this.deps.assets.getOwned(ref.url.slice(ASSET_SCHEME.length), ownerKeyId);
    if (!asset || asset.expiresAt <= Date.now()) {
      throw new AppError('asset_not_found', `${ref.field}: ${ref.url} is not an asset of this API key (unknown, another key's, or expired)`, {
        param: ref.field,
      });
    }
    if (asset.status !== 'approved' || !asset.file) {
      throw new AppError(
        'asset_not_found',
        `${ref.field}: ${ref.url} was rejected by review (${asset.reason ?? 'no reason'}); only approved assets can be used`,
        { param: ref.field },
      );
    }
    return asset;
  }
}

/** The content type a reviewed medium is stored with (the bucket serves it so), when its format is one the gateway knows. */
function storedType(facts: MediaFacts): { contentType?: string } {
  const format = MEDIA_FORMATS[facts.format];
  return format ? { contentType: format.contentType } : {};
}
