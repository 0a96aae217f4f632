/**
 * A failed bucket request, as the gateway logs and shows it: the operation, the key, S3's error
 * name, the HTTP status and message, and nothing else. The SDK's own exception also carries the
 * raw response and fields of the error document (such as the access key id a signature was made
 * with), which stay out of logs.
 */
export class S3StorageError extends Error {
  constructor(
    readonly operation: string,
    readonly target: string,
    readonly code: string,
    readonly status: number | undefined,
    detail: string,
  ) {
    super(`${operation} ${target}: ${code}${status ? ` (HTTP ${status})` : ''}${detail ? `: ${detail}` : ''}`);
    this.name = 'S3StorageError';
  }
}
