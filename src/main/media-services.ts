import type { Config } from '../config.js';
import { AssetService } from '../media/asset-service.js';
import type { BlobStore } from '../media/blob-store.js';
import type { BlobStores } from '../media/blob-stores.js';
import { MediaAdmission } from '../media/media-admission.js';
import { MediaReviewer, type MediaFileFetcher } from '../media/media-review.js';
import { fetchMedia, fetchMediaToFile } from '../media/safe-fetch.js';
import type { Store } from '../store/types.js';

/** Fetches a caller URL into memory, checking the first bytes with `accept`. */
export type MediaFetcher = (
  url: string,
  field: string,
  maxBytes: number,
  accept: (contentType: string, first: Buffer) => boolean,
  signal: AbortSignal,
) => Promise<Buffer>;

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
  /** Reviewed copies of caller media, one folder per task (`<data>/inputs`, or the bucket's `inputs/`). */
  inputs: BlobStore;
}

/** Caller media: the safe fetcher, submit-time review and the asset library, on the `inputs` and `assets` areas of the storage. */
export function createMediaServices(config: Config, store: Store, tmpDir: string, storage: BlobStores): MediaServices {
  const fetch: MediaFetcher = async (url, field, maxBytes, accept, signal) =>
    (await fetchMedia(url, { field, maxBytes, allowPrivate: config.allowPrivateUrls, accept, signal })).bytes;
  const fetchToFile: MediaFileFetcher = ({ url, field, maxBytes, accept, signal, onLength }) =>
    fetchMediaToFile(url, { field, maxBytes, allowPrivate: config.allowPrivateUrls, accept, signal, ...(onLength && { onLength }), dir: tmpDir });
  const admission = new MediaAdmission({ ...config.mediaBudget, keyQueue: MEDIA_KEY_QUEUE });
  const { inputs, assets: assetFiles } = storage;
  return {
    fetch,
    admission,
    inputs,
    reviewer: new MediaReviewer({ fetch: fetchToFile, inputs, assets: store.assets, assetFiles, admission, timeoutMs: config.mediaReviewTimeoutMs }),
    assets: new AssetService({
      assets: store.assets,
      files: assetFiles,
      fetch: fetchToFile,
      admission,
      tmpDir,
      timeoutMs: config.mediaReviewTimeoutMs,
      maxBytes: config.assetMaxBytes,
      quotaBytes: config.assetQuotaBytes,
      ttlHours: config.assetTtlHours,
    }),
  };
}
