import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { CreateBucketCommand, DeleteBucketCommand, HeadObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import type { Logger } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openBlobStores } from '../../src/media/blob-stores.js';
import { FsBlobStore } from '../../src/media/fs-blob-store.js';
import { S3BlobStore } from '../../src/media/s3-blob-store.js';
import { S3StorageError } from '../../src/media/s3-storage-error.js';
import { runBlobStoreContract } from '../cases/blob-store-contract.case.js';
import { tempDir } from '../helpers/temp-root.js';
import { S3_ACCESS_KEY, type S3Server, startS3Server, useS3Credentials } from '../helpers/s3-server.js';

useS3Credentials();
let s3: S3Server;
let strict: S3Server;
beforeAll(async () => {
  s3 = await startS3Server();
  strict = await startS3Server({ strict: true, bucket: 'strict-bucket' });
});
afterAll(async () => {
  await s3?.close();
  await strict?.close();
});

let bucketCount = 0;
/** A new empty bucket per test, so no test sees another's keys. */
async function freshBucket(): Promise<string> {
  const bucket = `contract-${++bucketCount}-${randomBytes(3).toString('hex')}`;
  await s3.client.send(new CreateBucketCommand({ Bucket: bucket }));
  return bucket;
}

runBlobStoreContract('local folder', async () => {
  const dir = tempDir('fs-blobs-');
  const bucket = await freshBucket();
  return {
    store: new FsBlobStore(path.join(dir, 'results')),
    sibling: new FsBlobStore(path.join(dir, 'assets')),
    foreign: new S3BlobStore(s3.client, bucket, '', 'assets'),
    close: async () => fs.rmSync(dir, { recursive: true, force: true }),
  };
});

runBlobStoreContract('S3 bucket (s3rver)', async () => {
  const dir = tempDir('fs-blobs-');
  const bucket = await freshBucket();
  return {
    store: new S3BlobStore(s3.client, bucket, 'mg/', 'results'),
    sibling: new S3BlobStore(s3.client, bucket, 'mg/', 'assets'),
    foreign: new FsBlobStore(path.join(dir, 'assets')),
    close: async () => fs.rmSync(dir, { recursive: true, force: true }),
  };
});

describe('S3 blob store', () => {
  it('keeps files at <prefix><area>/<folder>/<name>, with the content type given', async () => {
    const bucket = await freshBucket();
    const results = new S3BlobStore(s3.client, bucket, 'envs/prod/', 'results');
    await results.put('task_k', 'image.ab12.png', { data: Buffer.from('png') }, { contentType: 'image/png' });
    await new S3BlobStore(s3.client, bucket, 'envs/prod/', 'inputs').put('task_k', '0-images', { data: Buffer.from('in') });
    const listed = await s3.client.send(new ListObjectsV2Command({ Bucket: bucket }));
    expect(listed.Contents?.map((o) => o.Key).sort()).toEqual(['envs/prod/inputs/task_k/0-images', 'envs/prod/results/task_k/image.ab12.png']);
    const head = await s3.client.send(new HeadObjectCommand({ Bucket: bucket, Key: 'envs/prod/results/task_k/image.ab12.png' }));
    expect(head.ContentType).toBe('image/png');
    expect(results.location).toBe(`s3://${bucket}/envs/prod/results/`);
  });

  it('a ping fails for a bucket that does not exist, saying so in a clean error', async () => {
    const failed = await new S3BlobStore(s3.client, 'no-such-bucket', '', 'results').ping().catch((err: unknown) => err);
    expect(failed).toBeInstanceOf(S3StorageError);
    expect(failed).toMatchObject({ operation: 'HeadBucket', code: 'NotFound', status: 404, message: 'HeadBucket s3://no-such-bucket/: NotFound (HTTP 404)' });
  });

  it("a refused request becomes an error naming the operation and key, without the SDK's raw fields (an access key id, the response)", async () => {
    const store = new S3BlobStore(strict.client, strict.bucket, '', 'results');
    await store.put('task_e', 'a.png', { data: Buffer.from('x') });
    const { S3Client } = await import('@aws-sdk/client-s3');
    const wrongKey = new S3Client({
      endpoint: strict.endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: S3_ACCESS_KEY, secretAccessKey: 'not-the-secret' },
    });
    try {
      const failed = await new S3BlobStore(wrongKey, strict.bucket, '', 'results').stat('task_e', 'a.png').catch((err: unknown) => err);
      expect(failed).toBeInstanceOf(S3StorageError);
      expect((failed as Error).message).toBe(`HeadObject s3://${strict.bucket}/results/task_e/a.png: Forbidden (HTTP 403)`);
      const logged = JSON.stringify({ ...(failed as object), message: (failed as Error).message });
      expect(logged).not.toContain('not-the-secret');
      expect(logged).not.toContain(S3_ACCESS_KEY);
      expect(Object.keys(failed as object).sort()).toEqual(['code', 'name', 'operation', 'status', 'target']);
    } finally {
      wrongKey.destroy();
    }
  });

  it('presigns a GET the bucket honours (signature checked), with the type asked and Range; an altered one is refused', async () => {
    const store = new S3BlobStore(strict.client, strict.bucket, '', 'results');
    const data = Buffer.from('0123456789');
    await store.put('task_p', 'video.x.mp4', { data });
    const url = await store.presign('task_p', 'video.x.mp4', Date.now() + 3600_000, 'video/mp4');
    expect(new URL(url).searchParams.get('X-Amz-Expires')).toMatch(/^(3599|3600)$/);
    const got = await fetch(url);
    expect(got.status).toBe(200);
    expect(got.headers.get('content-type')).toBe('video/mp4');
    expect(Buffer.from(await got.arrayBuffer())).toEqual(data);
    const part = await fetch(url, { headers: { range: 'bytes=2-4' } });
    expect(part.status).toBe(206);
    expect(await part.text()).toBe('234');
    const altered = await fetch(url.replace(/X-Amz-Signature=([0-9a-f])/, (_m, c: string) => `X-Amz-Signature=${c === '0' ? '1' : '0'}`));
    expect(altered.status).toBe(403);
  });

  it('presigned URLs never outlive 7 days (SigV4), whatever the link asks', async () => {
    const store = new S3BlobStore(strict.client, strict.bucket, '', 'results');
    const url = await store.presign('task_p', 'video.x.mp4', Date.now() + 30 * 86_400_000, 'video/mp4');
    expect(new URL(url).searchParams.get('X-Amz-Expires')).toBe(String(7 * 86_400));
  });
});

describe('storage readiness (G174)', () => {
  it("one HeadBucket answers for a while (the clock is the test's): a bucket gone is seen once the answer is older than cacheMs", async () => {
    const bucket = await freshBucket();
    let now = 1_000_000;
    const warned: unknown[] = [];
    const log = {
      info: () => undefined,
      warn: (fields: unknown) => {
        warned.push(fields);
      },
    } as unknown as Pick<Logger, 'info' | 'warn'>;
    const stores = await openBlobStores(loadConfig({ MEDIAGATE_DATA_DIR: tempDir(), ...s3.env(), MEDIAGATE_S3_BUCKET: bucket }), {
      cacheMs: 5000,
      now: () => now,
      log,
    });
    try {
      expect(await stores.problem()).toBeUndefined();
      await s3.client.send(new DeleteBucketCommand({ Bucket: bucket }));
      now += 4999;
      expect(await stores.problem()).toBeUndefined(); // still the answer of 4.999 s ago
      now += 1;
      expect(await stores.problem()).toBe('storage: the file storage cannot be reached (the log names it and why)');
      expect(warned.at(-1)).toEqual({ location: `s3://${bucket}/results/`, error: `HeadBucket s3://${bucket}/: NotFound (HTTP 404)` });
      await s3.client.send(new CreateBucketCommand({ Bucket: bucket }));
      expect(await stores.problem()).toMatch(/cannot be reached/); // cached again
      now += 5000;
      expect(await stores.problem()).toBeUndefined();
    } finally {
      stores.close();
    }
  });

  it('without a bucket the three areas are folders of the data directory, and it answers for them', async () => {
    const dir = tempDir();
    const stores = await openBlobStores(loadConfig({ MEDIAGATE_DATA_DIR: dir }));
    expect(stores.kind).toBe('local');
    expect([stores.results.location, stores.inputs.location, stores.assets.location]).toEqual(['results', 'inputs', 'assets'].map((a) => path.join(dir, a)));
    expect(await stores.problem()).toBeUndefined();
  });
});
