/**
 * MEDIAGATE_S3_CREATE_BUCKET (G346), against a local S3 server started without the bucket: the
 * gateway's storage creates it at the start (several processes at once too), and again when the
 * readiness probe finds it gone; without the setting a missing bucket stays missing and /readyz
 * says so.
 */
import { DeleteBucketCommand, ListBucketsCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openBlobStores } from '../../src/media/blob-stores.js';
import { ensureBucket } from '../../src/media/s3-bucket.js';
import { tempDir } from '../helpers/temp-root.js';
import { type S3Server, startS3Server, useS3Credentials } from '../helpers/s3-server.js';

useS3Credentials();
let s3: S3Server;
beforeAll(async () => {
  s3 = await startS3Server({ bucket: 'made-by-the-gateway', createBucket: false });
});
afterAll(async () => {
  await s3?.close();
});

const buckets = async (): Promise<string[]> => ((await s3.client.send(new ListBucketsCommand({}))).Buckets ?? []).map((b) => b.Name!);
const configOf = (extra: Record<string, string> = {}) => loadConfig({ MEDIAGATE_DATA_DIR: tempDir(), ...s3.env(), ...extra });

describe('MEDIAGATE_S3_CREATE_BUCKET (G346)', () => {
  it('off (the default): a missing bucket is not created and the readiness probe names it', async () => {
    const stores = await openBlobStores(configOf());
    try {
      expect(await stores.problem()).toBe('storage: the file storage cannot be reached (the log names it and why)');
      expect(await buckets()).not.toContain('made-by-the-gateway');
    } finally {
      stores.close();
    }
  });

  it('on: three processes starting at once all find the bucket made, once; files go in; a bucket removed later is made again by the probe', async () => {
    const logs: string[] = [];
    const log = {
      info: (_: unknown, msg: string) => {
        logs.push(msg);
      },
      warn: (_: unknown, msg: string) => {
        logs.push(`warn: ${msg}`);
      },
    };
    let now = 0;
    const all = await Promise.all([1, 2, 3].map(() => openBlobStores(configOf({ MEDIAGATE_S3_CREATE_BUCKET: '1' }), { log: log as never, now: () => now })));
    try {
      expect((await buckets()).filter((b) => b === 'made-by-the-gateway')).toHaveLength(1);
      for (const stores of all) expect(await stores.problem()).toBeUndefined();
      expect(logs.filter((l) => l.startsWith('warn'))).toEqual([]);
      expect(logs).toContain('created the bucket (MEDIAGATE_S3_CREATE_BUCKET)');
      await all[0]!.results.put('task_1', 'image.png', { data: Buffer.from('png bytes') });
      expect((await s3.object('results/task_1/image.png')).toString()).toBe('png bytes');

      await all[1]!.results.remove('task_1', 'image.png');
      await s3.client.send(new DeleteBucketCommand({ Bucket: 'made-by-the-gateway' }));
      now += 60_000; // past the probe's cached answer
      expect(await all[1]!.problem()).toBeUndefined();
      expect(await buckets()).toContain('made-by-the-gateway');
    } finally {
      for (const stores of all) stores.close();
    }
  });

  it('ensureBucket answers "present" for a bucket that is there and does not create it again', async () => {
    expect(await ensureBucket(s3.client, 'made-by-the-gateway')).toBe('present');
    expect(await ensureBucket(s3.client, 'another-new-bucket')).toBe('created');
    expect(await ensureBucket(s3.client, 'another-new-bucket')).toBe('present');
  });
});
