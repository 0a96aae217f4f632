/**
 * The gateway's three storage areas, on the backend the configuration picks (G170): a local
 * folder each under the data directory, or one prefix each in the S3 bucket of
 * `MEDIAGATE_S3_BUCKET`. Scratch space (`<data>/tmp`: downloads being checked, uploads being
 * received, provider work folders) stays on the local disk either way.
 */
import path from 'node:path';
import type { Logger } from 'pino';
import type { SettingsConfig } from '../settings-config.js';
import type { BlobStore } from './blob-store.js';
import { FsBlobStore } from './fs-blob-store.js';

export interface BlobStores {
  /** Result files, a folder per task (`results`). */
  results: BlobStore;
  /** Reviewed copies of caller media, a folder per unfinished task (`inputs`). */
  inputs: BlobStore;
  /** Uploaded assets, a folder per asset (`assets`). */
  assets: BlobStore;
  /** `local` or `s3`, for logs. */
  kind: 'local' | 's3';
  /** Whether the storage answers, asked at most once per `cacheMs` (for /readyz): undefined, or why not, naming no place (the log has it). */
  problem(): Promise<string | undefined>;
  close(): void;
}

const AREAS = ['results', 'inputs', 'assets'] as const;

export interface BlobStoresOptions {
  /** How long one reachability answer is kept, ms (default 5000). */
  cacheMs?: number;
  now?: () => number;
  /** Told when the bucket is created (`MEDIAGATE_S3_CREATE_BUCKET`, G346) or could not be. */
  log?: Pick<Logger, 'info' | 'warn'>;
}

/** Opens the storage; the AWS SDK is loaded only when a bucket is configured (it adds ~200 ms and ~20 MiB to a start). */
export async function openBlobStores(config: Pick<SettingsConfig, 's3' | 'dataDir'>, options: BlobStoresOptions = {}): Promise<BlobStores> {
  const { cacheMs = 5000, now = Date.now, log } = options;
  let stores: Record<(typeof AREAS)[number], BlobStore>;
  let close = (): void => undefined;
  /** Creates a missing bucket (G346): at the start, and again whenever the readiness probe finds none. */
  let ensure: (() => Promise<void>) | undefined;
  if (config.s3) {
    const s3 = config.s3;
    const { createS3Client, S3BlobStore } = await import('./s3-blob-store.js');
    const client = createS3Client(s3);
    close = () => client.destroy();
    if (s3.createBucket) {
      const { ensureBucket } = await import('./s3-bucket.js');
      ensure = async () => {
        try {
          if ((await ensureBucket(client, s3.bucket)) === 'created') log?.info({ bucket: s3.bucket }, 'created the bucket (MEDIAGATE_S3_CREATE_BUCKET)');
        } catch (err) {
          log?.warn(
            { bucket: s3.bucket, error: `${(err as Error).name}: ${(err as Error).message}` },
            'could not make sure the bucket exists (MEDIAGATE_S3_CREATE_BUCKET); /readyz tries again',
          );
        }
      };
      await ensure();
    }
    stores = {
      results: new S3BlobStore(client, s3.bucket, s3.prefix, 'results'),
      inputs: new S3BlobStore(client, s3.bucket, s3.prefix, 'inputs'),
      assets: new S3BlobStore(client, s3.bucket, s3.prefix, 'assets'),
    };
  } else {
    stores = {
      results: new FsBlobStore(path.join(config.dataDir, 'results')),
      inputs: new FsBlobStore(path.join(config.dataDir, 'inputs')),
      assets: new FsBlobStore(path.join(config.dataDir, 'assets')),
    };
  }
  let cached: { at: number; problem: Promise<string | undefined> } | undefined;
  const probe = async (): Promise<string | undefined> => {
    // one bucket (or one data directory) holds all three: the results area answers for it
    try {
      await stores.results.ping();
      return undefined;
    } catch (err) {
      if (ensure) {
        await ensure();
        if (
          await stores.results.ping().then(
            () => true,
            () => false,
          )
        )
          return undefined;
      }
      // the reply of the key-less /readyz names no bucket, endpoint, host or path (G262): those go to the log
      log?.warn({ location: stores.results.location, error: (err as Error).message }, 'the storage cannot be reached (/readyz answers 503)');
      return 'storage: the file storage cannot be reached (the log names it and why)';
    }
  };
  return {
    ...stores,
    kind: config.s3 ? 's3' : 'local',
    problem() {
      const at = now();
      if (!cached || at - cached.at >= cacheMs) cached = { at, problem: probe() }; // concurrent asks share one probe
      return cached.problem;
    },
    close,
  };
}
