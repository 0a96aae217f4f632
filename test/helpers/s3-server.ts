/**
 * A local S3-compatible server for the tests (@20minutes/s3rver, on 127.0.0.1, files in a temp
 * folder), and a client of it. Its credentials are s3rver's own (`S3RVER`/`S3RVER`), handed to the
 * gateway the way an operator would: AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY in the environment
 * (each test file runs in a process of its own).
 *
 * s3rver recomputes SigV4 signatures from the bucket and key it parsed, so it gets bucket-level
 * requests (HeadBucket, ListObjectsV2, DeleteObjects: signed over `/bucket/` by the SDK) wrong; a
 * server made with `{ strict: true }` checks signatures anyway, for tests of presigned URLs, which
 * only use object requests.
 */
import fs from 'node:fs';
import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import S3rver from '@20minutes/s3rver';
import { tempDir } from './temp-root.js';

export const S3_ACCESS_KEY = 'S3RVER';
export const S3_SECRET_KEY = 'S3RVER';

export interface S3Server {
  endpoint: string;
  bucket: string;
  /** A client with the server's credentials (path style). */
  client: S3Client;
  /** The gateway settings that put its storage in this server's bucket. */
  env(extra?: Record<string, string>): Record<string, string>;
  /** Every key under `prefix`. */
  keys(prefix?: string): Promise<string[]>;
  /** An object's bytes. */
  object(key: string): Promise<Buffer>;
  /** Stops the server (every open connection cut), waits `ms`, and starts it again on the same port with the same files. */
  outage(ms: number): Promise<void>;
  close(): Promise<void>;
}

/** Lets the AWS SDK's default chain find the server's credentials, as in a deployment. */
export function useS3Credentials(): void {
  process.env.AWS_ACCESS_KEY_ID = S3_ACCESS_KEY;
  process.env.AWS_SECRET_ACCESS_KEY = S3_SECRET_KEY;
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true'; // the Node 20 notice, once per test process
}

/** `createBucket: false` starts the server without the bucket (a gateway may create it, G346). */
export async function startS3Server(options: { bucket?: string; strict?: boolean; createBucket?: boolean } = {}): Promise<S3Server> {
  const bucket = options.bucket ?? 'mediagate-test';
  const directory = tempDir('s3rver-');
  let server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory,
    allowMismatchedSignatures: options.strict !== true,
    configureBuckets: options.createBucket === false ? [] : [{ name: bucket }],
  });
  const { port } = await server.run();
  const stop = async (): Promise<void> => {
    const http = (server as unknown as { httpServer?: { closeAllConnections(): void } }).httpServer;
    const closing = server.close();
    http?.closeAllConnections(); // keep-alive sockets of the gateway's client would hold the close open
    await closing;
  };
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: S3_ACCESS_KEY, secretAccessKey: S3_SECRET_KEY },
  });
  return {
    endpoint,
    bucket,
    client,
    env: (extra = {}) => ({ MEDIAGATE_S3_BUCKET: bucket, MEDIAGATE_S3_ENDPOINT: endpoint, MEDIAGATE_S3_FORCE_PATH_STYLE: '1', ...extra }),
    async keys(prefix = '') {
      const keys: string[] = [];
      let token: string | undefined;
      do {
        const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ...(token && { ContinuationToken: token }) }));
        keys.push(...(page.Contents ?? []).map((o) => o.Key!));
        token = page.NextContinuationToken;
      } while (token);
      return keys.sort();
    },
    async object(key) {
      const got = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      return Buffer.from(await got.Body!.transformToByteArray());
    },
    async outage(ms) {
      await stop();
      await new Promise((resolve) => setTimeout(resolve, ms));
      server = new S3rver({ address: '127.0.0.1', port, silent: true, directory, allowMismatchedSignatures: options.strict !== true, configureBuckets: [] });
      await server.run();
    },
    async close() {
      client.destroy();
      await stop();
      fs.rmSync(directory, { recursive: true, force: true });
    },
  };
}
