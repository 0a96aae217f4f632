import path from 'node:path';
import type { Config } from '../config.js';
import { AssetService } from '../media/asset-service.js';
import { FsBlobStore } from '../media/blob-store.js';
import { MediaAdmission } from '../media/media-admission.js';
import { MediaReviewer, type MediaFileFetcher } from '../media/media-review.js';
import { fetchMedia, fetchMediaToFile } from '../media/safe-fetch.js';
import type { Store } from '../store/types.js';

/** Fetches a caller URL into memory, checking the first bytes with `accept`. */
export type MediaFetcher = (url: string, field: string, maxBytes: number, accept: (contentType: string, first: Buffer) => boolean, signal: AbortSignal) => Promise<Buffer>;

/** Media of one key that may wait for a slot at once (G100); one more is a 429. */
export const MEDIA_KEY_QUEUE = 64;

export interface MediaServices {
  /**
   * The safe fetcher of caller URLs into memory, with the configured address rule: only the task
   * runner's fallback for media that were not reviewed at submit (review off), bounded by the
   * provider's size cap. Review and assets stream to files instead.
   */
  fetch: MediaFetcher;
  /** Slots and bytes for fetching and checking caller media, fair between keys (G100, G101). */
  admission: MediaAdmission;
  reviewer: MediaReviewer;
  assets: AssetService;
  /** `<data>/inputs`: reviewed copies of caller media, one folder per task. */
  inputs: FsBlobStore;
}

/** Caller media: the safe fetcher, submit-time review and the asset library, on `<data>/inputs` and `<data>/assets`. */
export function createMediaServices(config: Config, store: Store, tmpDir: string): MediaServices {
  const fetch: MediaFetcher = async (url, field, maxBytes, accept, signal) =>
    (await fetchMedia(url, { field, maxBytes, allowPrivate: config.allowPrivateUrls, accept, signal })).bytes;
  const fetchToFile: MediaFileFetcher = ({ url, field, maxBytes, accept, signal, onLength }) =>
    fetchMediaToFile(url, { field, maxBytes, allowPrivate: config.allowPrivateUrls, accept, signal, ...(onLength && { onLength }), dir: tmpDir });
  const admission = new MediaAdmission({ ...config.mediaBudget, keyQueue: MEDIA_KEY_QUEUE });
  const inputs = new FsBlobStore(path.join(config.dataDir, 'inputs'));
  const assetFiles = new FsBlobStore(path.join(config.dataDir, 'assets'));
  return {
    fetch,
    admission,
    inputs,
    reviewer: new MediaReviewer({ fetch: fetchToFile, inputs, assets: store.assets, assetFiles, admission, timeoutMs: config.mediaReviewTimeoutMs }),
    assets: new AssetService({
      assets: store.assets, files: assetFiles, fetch: fetchToFile, admission, tmpDir, timeoutMs: config.mediaReviewTimeoutMs,
      maxBytes: config.assetMaxBytes, quotaBytes: config.assetQuotaBytes, ttlHours: config.assetTtlHours,
    }),
  };
}
