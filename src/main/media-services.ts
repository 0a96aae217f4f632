import path from 'node:path';
import type { Config } from '../config.js';
import { AssetService } from '../media/asset-service.js';
import { FsBlobStore } from '../media/blob-store.js';
import { MediaReviewer, type MediaFetcher } from '../media/media-review.js';
import { fetchMedia } from '../media/safe-fetch.js';
import type { Store } from '../store/types.js';

export interface MediaServices {
  /** The safe fetcher of caller URLs, with the configured address rule. */
  fetch: MediaFetcher;
  reviewer: MediaReviewer;
  assets: AssetService;
  /** `<data>/inputs`: reviewed copies of caller media, one folder per task. */
  inputs: FsBlobStore;
}

/** Caller media: the safe fetcher, submit-time review and the asset library, on `<data>/inputs` and `<data>/assets`. */
export function createMediaServices(config: Config, store: Store, tmpDir: string): MediaServices {
  const fetch: MediaFetcher = async (url, field, maxBytes, accept, signal) =>
    (await fetchMedia(url, { field, maxBytes, allowPrivate: config.allowPrivateUrls, accept, signal })).bytes;
  const inputs = new FsBlobStore(path.join(config.dataDir, 'inputs'));
  const assetFiles = new FsBlobStore(path.join(config.dataDir, 'assets'));
  return {
    fetch,
    inputs,
    reviewer: new MediaReviewer({ fetch, inputs, assets: store.assets, assetFiles, tmpDir, timeoutMs: config.mediaReviewTimeoutMs }),
    assets: new AssetService({
      assets: store.assets, files: assetFiles, fetch, tmpDir,
      maxBytes: config.assetMaxBytes, quotaBytes: config.assetQuotaBytes, ttlHours: config.assetTtlHours,
    }),
  };
}
