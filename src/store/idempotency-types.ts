/** Idempotency-Key records. Part of the store contract (types.ts). */
/** How a task names the Idempotency-Key claim that created it: API key, Idempotency-Key and when it was claimed. */
export const idempotencyTaskKey = (keyId: string, idemKey: string, claimedAt: number): string => `${keyId}:${claimedAt}:${idemKey}`;

/** What `IdempotencyStore.begin` found for a key. */
export type IdempotencyBegin =
  | { state: 'new' }
  | { state: 'replay'; statusCode: number; response: string }
  | { state: 'mismatch' }
  | { state: 'in_progress' }
  /** The claim's request died after its task was committed: that task, to answer with. */
  | { state: 'recovered'; taskId: string };

/** Idempotency-Key records, scoped to the API key that sent them. */
export interface IdempotencyStore {
  /**
   * Claims `idemKey` for a request with this fingerprint, in one transaction: a stored response
   * of the same fingerprint is replayed, another fingerprint is a mismatch, a claim younger than
   * `staleBefore` is in progress; a record older than `expiredBefore` counts as absent. A claim
   * whose task was committed (tasks carry their `idempotencyKey`) is `recovered`, stale or not (G266).
   */
  begin(keyId: string, idemKey: string, fingerprint: string, now: number, staleBefore: number, expiredBefore: number): Promise<IdempotencyBegin>;
  /** Stores the response of a claimed key. */
  complete(keyId: string, idemKey: string, statusCode: number, response: string): Promise<void>;
  /** Drops a claim whose request did not succeed, so the key can be used again; never one whose task was committed (G266). */
  abandon(keyId: string, idemKey: string): Promise<void>;
  /** Deletes records created before `before`; returns how many. */
  purge(before: number): Promise<number>;
}
