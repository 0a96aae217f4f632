/** Web console sessions (G361). Part of the store contract (types.ts). */
/**
 * A web console session (G361): the SHA-256 of its cookie value (the value itself is never
 * stored), the hash of the API key it was signed in with (so revoking or expiring the key ends it
 * at once), the CSRF token every change made with it must send, and its times (Unix ms).
 */
export interface SessionRecord {
  idHash: string;
  keyHash: string;
  csrfToken: string;
  createdAt: number;
  expiresAt: number;
}

/** Console sessions (G361). */
export interface SessionStore {
  insert(session: SessionRecord): Promise<void>;
  /** The session with this id hash, expired or not (the caller compares `expiresAt`). */
  find(idHash: string): Promise<SessionRecord | undefined>;
  /** Ends one session; false when there was none. */
  delete(idHash: string): Promise<boolean>;
  /** Forgets sessions that expired before `now`; how many. */
  deleteExpired(now: number): Promise<number>;
}
