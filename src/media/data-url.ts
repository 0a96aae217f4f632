/**
 * `data:` URLs (RFC 2397: `data:[<media type>][;base64],<data>`), the form some upstreams answer a
 * result file in instead of a link (fal's `sync_mode`, on by default for some of its models;
 * Replicate's outputs may be one): decoded in memory, bounded in size before decoding.
 */

export class DataUrlError extends Error {
  constructor(
    message: string,
    readonly tooLarge = false,
  ) {
    super(message);
    this.name = 'DataUrlError';
  }
}

export const isDataUrl = (url: string): boolean => /^data:/i.test(url);

/** `data:image/png;base64,...` -> `data:image/png`: what a data URL is, without its bytes (for records and logs). */
export function dataUrlLabel(url: string): string {
  const comma = url.indexOf(',');
  const head = (comma === -1 ? url : url.slice(0, comma)).slice(0, 200);
  return head.replace(/;base64$/i, '');
}

/** The media type and bytes of a data URL; throws a DataUrlError when it is malformed or larger than `maxBytes`. */
export function decodeDataUrl(url: string, maxBytes: number): { mediaType: string; bytes: Buffer } {
  if (!isDataUrl(url)) throw new DataUrlError('is not a data: URL');
  const comma = url.indexOf(',');
  if (comma === -1) throw new DataUrlError('is a data: URL without a comma before its data');
  const params = url.slice(5, comma).split(';');
  const base64 = params.at(-1)?.toLowerCase() === 'base64';
  if (base64) params.pop();
  const mediaType = (params[0] ?? '').trim().toLowerCase();
  const data = url.slice(comma + 1);
  // bounded before decoding: base64 makes 3 bytes of 4 characters; percent-encoding at most 1 of 1
  const most = base64 ? Math.floor((data.length * 3) / 4) : data.length;
  if (most > maxBytes + 2) throw new DataUrlError(`is larger than ${maxBytes} bytes`, true);
  let bytes: Buffer;
  if (base64) {
    const clean = data.replace(/%2B/gi, '+').replace(/%2F/gi, '/').replace(/%3D/gi, '=').replace(/\s+/g, '');
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(clean) && !/^[A-Za-z0-9_-]*={0,2}$/.test(clean)) throw new DataUrlError('is a data: URL whose base64 is malformed');
    bytes = Buffer.from(clean, 'base64');
  } else {
    if (/%(?![0-9A-Fa-f]{2})/.test(data)) throw new DataUrlError('is a data: URL whose percent-encoding is malformed');
    // each %XX is one byte, each other character one byte of its own
    bytes = Buffer.from(
      data.replace(/%([0-9A-Fa-f]{2})/g, (_m, hex: string) => String.fromCharCode(Number.parseInt(hex, 16))),
      'latin1',
    );
  }
  if (bytes.length > maxBytes) throw new DataUrlError(`is larger than ${maxBytes} bytes`, true);
  if (bytes.length === 0) throw new DataUrlError('is a data: URL without data');
  return { mediaType, bytes };
}
