/**
 * `MEDIAGATE_S3_CREATE_BUCKET=1` (G346): a gateway that finds no bucket creates it, so a fresh
 * compose stack or cluster needs no one-shot job for it. Several processes starting at once may all
 * try: when the create fails but the bucket now answers HeadBucket with these credentials (another
 * process made it: BucketAlreadyOwnedByYou, or BucketAlreadyExists from servers that say so to its
 * owner too), it is taken as made. A bucket owned by someone else answers HeadBucket 403: that stays
 * a failure, and nothing is stored in it.
 */
import { CreateBucketCommand, HeadBucketCommand, type S3Client } from '@aws-sdk/client-s3';

/** Bound on each request, ms. */
const REQUEST_TIMEOUT_MS = 10_000;

/** What ensureBucket did. */
export type BucketOutcome = 'present' | 'created';

const timeout = (): { abortSignal: AbortSignal } => ({ abortSignal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });

function isMissing(err: unknown): boolean {
  const { name } = err as Error;
  return (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404 || name === 'NotFound' || name === 'NoSuchBucket';
}

/** The bucket is there (HeadBucket answers), or is created now; throws what S3 answered otherwise. */
export async function ensureBucket(client: S3Client, bucket: string): Promise<BucketOutcome> {
  const head = (): Promise<unknown> => client.send(new HeadBucketCommand({ Bucket: bucket }), timeout());
  try {
    await head();
    return 'present';
  } catch (err) {
    if (!isMissing(err)) throw err;
  }
  try {
    await client.send(new CreateBucketCommand({ Bucket: bucket }), timeout());
    return 'created';
  } catch (err) {
    if (
      await head().then(
        () => true,
        () => false,
      )
    )
      return 'present';
    throw err;
  }
}
