import { randomBytes } from 'node:crypto';

/** A new task id: `task_` + 128 random bits, URL-safe and unguessable (decisions.md #7). */
export function newTaskId(): string {
  return `task_${randomBytes(16).toString('base64url')}`;
}

/** A new public id for an API key record (not the secret). */
export function newKeyId(): string {
  return `key_${randomBytes(6).toString('hex')}`;
}
