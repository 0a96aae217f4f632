import { randomBytes, randomFillSync } from 'node:crypto';

/** Random bytes drawn from the CSPRNG in blocks: one system call per 256 task ids, not one each. */
const POOL = Buffer.alloc(4096);
let poolOffset = POOL.length;

/** `bytes` fresh random bytes (never handed out twice) as base64url. */
export function randomToken(bytes: number): string {
  if (poolOffset + bytes > POOL.length) {
    randomFillSync(POOL);
    poolOffset = 0;
  }
  const token = POOL.toString('base64url', poolOffset, poolOffset + bytes);
  poolOffset += bytes;
  return token;
}

/** 64 URL-safe characters in ASCII order, so fixed-width strings of them sort as their numbers do. */
const SORTABLE = '-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz';

let lastMs = -1;
let lastTime = '';

/** `ms` as 8 characters of {@link SORTABLE} (48 bits: until the year 10889). */
export function sortableTime(ms: number): string {
  if (ms === lastMs) return lastTime; // a burst of submits shares its millisecond
  let out = '';
  let n = Math.floor(ms);
  for (let i = 0; i < 8; i++) {
    out = SORTABLE[n % 64]! + out;
    n = Math.floor(n / 64);
  }
  lastMs = ms;
  lastTime = out;
  return out;
}

/**
 * A new task id: `task_` + the creation time in milliseconds (8 characters that sort in time order)
 * + 128 random bits, URL-safe and unguessable (D7; the time is no secret: `created`
 * says it). Ids that grow with time keep SQLite's id index appending at its right edge: a batch of
 * submits dirties a few index pages instead of one random page per task (G81).
 */
export function newTaskId(now = Date.now()): string {
  return `task_${sortableTime(now)}${randomToken(16)}`;
}

/** A new public id for an API key record (not the secret). */
/** An account id (G200): `acct_` and 12 hex digits, like the ids migrated keys' accounts got. */
export function newAccountId(): string {
  return `acct_${randomBytes(6).toString('hex')}`;
}

export function newKeyId(): string {
  return `key_${randomBytes(6).toString('hex')}`;
}
