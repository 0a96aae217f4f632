/**
 * `Idempotency-Key` on the create endpoints (G70-G73), without HTTP: a request claims
 * its key before it runs; the same key with the same request within 24 h gets the first response
 * again; another request under the key is a 409; a request that failed frees its key. A claim
 * whose request died after committing its task is answered with that task's create reply.
 */
import { createHash } from 'node:crypto';
import { AppError } from '../errors.js';
import { originalCreateReply } from '../families/create-reply.js';
import type { IdempotencyStore, TaskStore } from '../store/types.js';

/** A request's claim on an Idempotency-Key; the task it creates carries it (store/types.ts `idempotencyTaskKey`). */
export interface IdempotencyClaim {
  keyId: string;
  idemKey: string;
  claimedAt: number;
}

/** What a create request does about its Idempotency-Key: run (holding the claim), or answer a stored response. */
export type IdempotencyStart = { run: true; claim: IdempotencyClaim } | { run: false; statusCode: number; payload: string };

export const IDEMPOTENCY_WINDOW_MS = 24 * 3_600_000;
/** A claim this old without a response is taken to be from a request that died (crash, restart). */
export const STALE_CLAIM_MS = 2 * 60_000;
const VALID_KEY = /^[\x21-\x7e]{1,255}$/;

/**
 * JSON text of a parsed value with every object's keys in sorted order (arrays keep theirs), so
 * the same fields in another order give the same text; numbers as JSON.stringify writes them.
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v ?? null)).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const obj = value as Record<string, unknown>;
    const parts: string[] = [];
    for (const k of Object.keys(obj).sort()) if (obj[k] !== undefined) parts.push(`${JSON.stringify(k)}:${canonicalJson(obj[k])}`);
    return `{${parts.join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/** What "the same request" means (G71): the endpoint and the canonical JSON of the parsed body. */
export function requestFingerprint(endpoint: string, body: unknown): string {
  return createHash('sha256')
    .update(`${endpoint}\n${canonicalJson(body)}`)
    .digest('base64url');
}

export class IdempotencyService {
  constructor(
    private readonly records: IdempotencyStore,
    private readonly tasks: TaskStore,
  ) {}

  /**
   * Claims `idemKey` of API key `keyId` for a request to `endpoint` with `body`, or finds the
   * response to answer instead. Throws the 400/409 a caller gets for a bad, reused or busy key.
   */
  async start(keyId: string, idemKey: unknown, endpoint: string, body: unknown, now = Date.now()): Promise<IdempotencyStart> {
    if (typeof idemKey !== 'string' || !VALID_KEY.test(idemKey)) {
      throw new AppError('invalid_request', 'Idempotency-Key must be 1-255 printable ASCII characters without spaces', { param: 'Idempotency-Key' });
    }
    const fingerprint = requestFingerprint(endpoint, body);
    const found = await this.records.begin(keyId, idemKey, fingerprint, now, now - STALE_CLAIM_MS, now - IDEMPOTENCY_WINDOW_MS);
    switch (found.state) {
      case 'new':
        return { run: true, claim: { keyId, idemKey, claimedAt: now } };
      case 'recovered': {
        // the first request committed its task, then died before answering
        const task = await this.tasks.get(found.taskId);
        if (!task)
          throw new AppError('invalid_task_state', `The task created under Idempotency-Key ${idemKey} no longer exists; use a new key`, {
            param: 'Idempotency-Key',
          });
        const payload = JSON.stringify(originalCreateReply(task));
        await this.records.complete(keyId, idemKey, 200, payload);
        return { run: false, statusCode: 200, payload };
      }
      case 'replay':
        return { run: false, statusCode: found.statusCode, payload: found.response };
      case 'mismatch':
        throw new AppError(
          'idempotency_key_reused',
          `Idempotency-Key ${idemKey} was already used with another request body (or endpoint) in the last 24 hours; use a new key for a new request`,
          { param: 'Idempotency-Key' },
        );
      case 'in_progress':
        throw new AppError('idempotency_in_progress', `A request with Idempotency-Key ${idemKey} is still being processed; retry shortly`, {
          param: 'Idempotency-Key',
          headers: { 'retry-after': '1' },
        });
    }
  }

  /**
   * Stores the response of a claimed request: a success is kept for replays, and so is a 402 (the
   * request was refused for its price: a replay stays refused even after a grant, G204); anything
   * else frees the key.
   */
  finish(claim: IdempotencyClaim, statusCode: number, payload: string | undefined): Promise<void> {
    if (((statusCode >= 200 && statusCode < 300) || statusCode === 402) && payload !== undefined)
      return this.records.complete(claim.keyId, claim.idemKey, statusCode, payload);
    return this.abandon(claim);
  }

  /** Frees a claim whose request sent no response (the client went away first). */
  abandon(claim: IdempotencyClaim): Promise<void> {
    return this.records.abandon(claim.keyId, claim.idemKey);
  }

  /** Forgets records older than the window (retention sweeper); returns how many. */
  purgeExpired(now = Date.now()): Promise<number> {
    return this.records.purge(now - IDEMPOTENCY_WINDOW_MS);
  }
}
