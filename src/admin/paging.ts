/**
 * Paging of the admin lists (G303), in the task list's style (G216-G218): `limit` 1-100 (default
 * 20); an opaque `cursor`, base64url of `[position..., filters digest]`, where the position is the
 * last item's sort key (`createdAt, id` for keys and accounts, the id for ledger and audit
 * entries). A cursor reused with other filters, or one that does not decode, is a 400 naming `cursor`.
 */
import { createHash } from 'node:crypto';
import { DEFAULT_ADMIN_LIMIT, MAX_ADMIN_LIMIT } from '../contract/admin-common.js';
import { invalidField } from '../errors.js';

/** A whole-number query parameter from 1 to `max` (`fallback` when absent); else a 400 naming it. */
export function parseWholeParam(name: string, raw: string | undefined, fallback: number, max: number): number {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!/^[0-9]{1,9}$/.test(raw) || n < 1 || n > max) throw invalidField(name, `${name} must be a whole number from 1 to ${max} (got "${raw}")`);
  return n;
}

export function parseLimit(raw: string | undefined): number {
  return parseWholeParam('limit', raw, DEFAULT_ADMIN_LIMIT, MAX_ADMIN_LIMIT);
}

/** A digest of the filters a page was read with, so its cursor only continues that list. */
export function filtersDigest(filters: unknown): string {
  return createHash('sha256').update(JSON.stringify(filters)).digest('base64url').slice(0, 16);
}

export function encodeCursor(position: readonly (string | number)[], digest: string): string {
  return Buffer.from(JSON.stringify([...position, digest])).toString('base64url');
}

const badCursor = () => invalidField('cursor', 'cursor is not a cursor this list returned (use next_cursor as it came, with the same filters)');

/** The position in `cursor`, checked to have `shape` (`n` a safe integer >= 0, `s` an id). */
export function decodeCursor(cursor: string, digest: string, shape: ReadonlyArray<'n' | 's'>): Array<string | number> {
  if (!/^[A-Za-z0-9_-]{1,400}$/.test(cursor)) throw badCursor();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw badCursor();
  }
  if (!Array.isArray(parsed) || parsed.length !== shape.length + 1) throw badCursor();
  const position = parsed.slice(0, -1) as unknown[];
  const fits = shape.every((kind, i) => {
    const v = position[i];
    return kind === 'n' ? Number.isSafeInteger(v) && (v as number) >= 0 : typeof v === 'string' && v.length > 0 && v.length <= 128 && !/\p{Cc}/u.test(v);
  });
  if (!fits) throw badCursor();
  if (parsed.at(-1) !== digest) throw invalidField('cursor', 'cursor was made for other filters: send the same filters as the first page');
  return position as Array<string | number>;
}

/** A page from `rows` read with `limit + 1`: the items, whether more follow, and the cursor of the next page. */
export function pageOf<T>(
  rows: T[],
  limit: number,
  positionOf: (last: T) => ReadonlyArray<string | number>,
  digest: string,
): { items: T[]; has_more: boolean; next_cursor: string | null } {
  const items = rows.slice(0, limit);
  const hasMore = rows.length > limit;
  const last = items.at(-1);
  return { items, has_more: hasMore, next_cursor: hasMore && last !== undefined ? encodeCursor(positionOf(last), digest) : null };
}
