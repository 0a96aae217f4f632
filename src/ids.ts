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

/** A new task id: `task_` + 128 random bits, URL-safe and unguessable (decisions.md #7). */
export function newTaskId(): string {
  return `task_${randomToken(16)}`;
}

/** A new public id for an API key record (not the secret). */
export function newKeyId(): string {
  return `key_${randomBytes(6).toString('hex')}`;
}
