/**
 * How a GET or HEAD of a stored file is answered (RFC 9110 §13, §14), decided from the request's
 * headers and the file's validators alone, so it holds the same for every storage backend (
 * G1, G172). Evaluation order (§13.2.2): If-Match (else If-Unmodified-Since) -> 412; If-None-Match
 * (else If-Modified-Since) -> 304; then, for GET, If-Range and Range -> 206, 416 or the whole file.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { BlobInfo, ByteRange } from '../media/blob-store.js';

/** What the file is, as the answer shows it. */
export interface FileValidators {
  size: number;
  /** The strong ETag (`strongEtag`). */
  etag: string;
  /** The HTTP date of the file's time (whole seconds). */
  lastModified: string;
}

export type FileAnswer = { status: 200 } | { status: 206; range: ByteRange } | { status: 304 } | { status: 412 } | { status: 416 };

/**
 * A strong validator: the size and the time in milliseconds, `"<size hex>-<ms hex>"`. Size and time
 * need not change when a file is rewritten, but stored files never are (each is written once under
 * a name of its own), so here the pair identifies the bytes and the tag may be strong, which If-Range
 * needs.
 */
export function strongEtag(info: BlobInfo): string {
  return `"${info.size.toString(16)}-${info.lastModified.getTime().toString(16)}"`;
}

export function validatorsOf(info: BlobInfo): FileValidators {
  return { size: info.size, etag: strongEtag(info), lastModified: info.lastModified.toUTCString() };
}

const INT_RANGE = /^(\d+)-(\d*)$/;
const SUFFIX_RANGE = /^-(\d+)$/;

/**
 * The one range to serve of a `Range` field, `unsatisfiable` (416), or undefined to send the whole
 * file. RFC 9110 §14.2 lets a server ignore Range, and ignore or reject an invalid ranges-specifier;
 * this one ignores: valid means the `bytes` unit (any case, §14.1) and a list of `first-last`,
 * `first-` or `-suffix` specs, empty list elements allowed; any spec with last < first, a non-numeric
 * or another form makes the whole field invalid (§14.1.1). Positions compare as BigInt, so long
 * numerals cannot overflow. A last position past the end means the end; a suffix longer than the
 * file is the whole file (§14.1.2). Unsatisfiable specs (first at or past the end, `-0`) are
 * dropped; overlapping or adjacent ones merged; none left is 416, one is 206, several are served
 * whole (200, which §14.2 allows in place of multipart/byteranges). An empty file ignores Range.
 */
export function byteRangeOf(field: string | undefined, size: number): ByteRange | 'unsatisfiable' | undefined {
  if (field === undefined || size === 0) return undefined;
  const eq = field.indexOf('=');
  if (eq < 0 || field.slice(0, eq).toLowerCase() !== 'bytes') return undefined;
  const total = BigInt(size);
  const ranges: ByteRange[] = [];
  let specs = 0;
  for (const element of field.slice(eq + 1).split(',')) {
    const spec = element.replace(/^[ \t]+|[ \t]+$/g, '');
    if (spec === '') continue;
    specs++;
    const int = INT_RANGE.exec(spec);
    if (int) {
      const first = BigInt(int[1]!);
      const last = int[2] === '' ? undefined : BigInt(int[2]!);
      if (last !== undefined && last < first) return undefined;
      if (first < total) ranges.push({ start: Number(first), end: Number(last === undefined || last >= total ? total - 1n : last) });
      continue;
    }
    const suffix = SUFFIX_RANGE.exec(spec);
    if (!suffix) return undefined;
    const length = BigInt(suffix[1]!);
    if (length > 0n) ranges.push({ start: Number(length >= total ? 0n : total - length), end: size - 1 });
  }
  if (specs === 0) return undefined;
  if (ranges.length === 0) return 'unsatisfiable';
  ranges.sort((a, b) => a.start - b.start);
  const merged: ByteRange[] = [{ ...ranges[0]! }];
  for (const r of ranges.slice(1)) {
    const current = merged[merged.length - 1]!;
    if (r.start <= current.end + 1) current.end = Math.max(current.end, r.end);
    else merged.push({ ...r });
  }
  return merged.length === 1 ? merged[0] : undefined;
}

/**
 * RFC 9110 §13.1.5: an entity tag holds only if it equals the current (strong) ETag, so a weak one
 * never does; a date only if it is exactly the Last-Modified time (files are written once and never
 * changed in place, so that time is a strong validator, §8.8.2.2). Anything else does not hold.
 */
export function ifRangeHolds(field: string, etag: string, lastModified: string): boolean {
  const value = field.trim();
  if (value.startsWith('"') || value.startsWith('W/')) return value === etag;
  const date = Date.parse(value);
  return !Number.isNaN(date) && date === Date.parse(lastModified);
}

const tokens = (field: string): string[] =>
  field
    .split(',')
    .map((t) => t.trim())
    .filter((t) => t !== '');

/** If-Match compares strongly (§13.1.1): only the current strong tag (or `*`) matches; `W/` never does. */
const ifMatchHolds = (field: string, etag: string): boolean => field.trim() === '*' || tokens(field).includes(etag);

/** If-None-Match compares weakly (§13.1.2): the tag with or without `W/`, or `*`. */
const ifNoneMatchHits = (field: string, etag: string): boolean => field.trim() === '*' || tokens(field).some((t) => t === etag || t === `W/${etag}`);

const header = (h: IncomingHttpHeaders, name: string): string | undefined => {
  const v = h[name];
  return typeof v === 'string' ? v : undefined;
};

/**
 * The answer to a GET or HEAD of a file with these validators. A date that does not parse is
 * ignored. A request `Cache-Control: no-cache` is for caches (RFC 9111 §5.2.1.4) and does not stop
 * a 304. Range is for GET only (a HEAD describes the whole file), If-Range only with Range.
 */
export function answerFileRequest(method: string, h: IncomingHttpHeaders, v: FileValidators): FileAnswer {
  const modified = Date.parse(v.lastModified);
  const ifMatch = header(h, 'if-match');
  if (ifMatch) {
    if (!ifMatchHolds(ifMatch, v.etag)) return { status: 412 };
  } else {
    // §13.1.4: If-Unmodified-Since is ignored when If-Match is present
    const since = Date.parse(header(h, 'if-unmodified-since') ?? '');
    if (!Number.isNaN(since) && modified > since) return { status: 412 };
  }
  const ifNoneMatch = header(h, 'if-none-match');
  if (ifNoneMatch !== undefined) {
    // §13.1.3: If-Modified-Since is ignored when If-None-Match is present
    if (ifNoneMatchHits(ifNoneMatch, v.etag)) return { status: 304 };
  } else if (modified <= Date.parse(header(h, 'if-modified-since') ?? '')) {
    return { status: 304 };
  }
  const range = header(h, 'range');
  if (method !== 'GET' || range === undefined) return { status: 200 };
  const ifRange = header(h, 'if-range');
  if (ifRange !== undefined && !ifRangeHolds(ifRange, v.etag, v.lastModified)) return { status: 200 };
  const wanted = byteRangeOf(range, v.size);
  if (wanted === undefined) return { status: 200 };
  if (wanted === 'unsatisfiable') return { status: 416 };
  return { status: 206, range: wanted };
}
