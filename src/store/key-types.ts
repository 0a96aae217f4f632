/** API keys and the key store (roles, rules, rotation, revocation). Part of the store contract (types.ts). */
import type { NewAuditEntry } from './audit-types.js';
import type { NewAccount } from './credit-types.js';

export interface ApiKeyRecord {
  id: string;
  name: string;
  /** The account whose credits the key spends (G200). */
  accountId: string;
  /** First characters of the key, for recognising it in listings. */
  prefix: string;
  createdAt: number;
  revokedAt: number | null;
  /** Per-key rate limits (requests per second; bursts of twice that); null: the server's defaults. */
  submitRate?: number | null;
  queryRate?: number | null;
  /**
   * The key's own spending cap (G207): the most credits its tasks and chat requests may hold and
   * have been charged, in total, micro-credits; null or absent: none (the account's balance only).
   */
  spendCapMicro?: number | null;
  /** The operator's default webhook URL for the key's tasks (G208); null or absent: none. */
  webhookUrl?: string | null;
  /** `caller` (absent: caller) uses the public API; `admin` the admin API only (G300). */
  role?: KeyRole;
  /** The models the key may create tasks and chat with: names or `family:*` patterns (G304); null or absent: every model. */
  models?: readonly string[] | null;
  /** After this time (Unix ms) the key is refused with 401 `key_expired` (G305); null or absent: never. */
  expiresAt?: number | null;
  /** The key's own bound on its queued and processing tasks (G306); null or absent: `MEDIAGATE_MAX_TASKS_IN_FLIGHT`. */
  maxInFlight?: number | null;
  /**
   * When the key was last used (Unix ms, written at most once a minute per process, G308): answered by
   * `get` and `listPage` only (null: never); absent from the lookups that authenticate requests.
   */
  lastUsed?: number | null;
  /**
   * Set only on a key found by a secret a rotation replaced (G307): that secret is accepted until
   * this time (Unix ms), whatever the cache holding the record.
   */
  graceUntil?: number;
}

export type KeyRole = 'caller' | 'admin';

/** Fields `KeyStore.update` may change (null clears); absent fields stay as they are. */
export type KeyPatch = Partial<
  Pick<ApiKeyRecord, 'name' | 'models' | 'expiresAt' | 'submitRate' | 'queryRate' | 'spendCapMicro' | 'maxInFlight' | 'webhookUrl'>
>;

/** What `KeyStore.listPage` reads: keys newest first (keyset pagination on (createdAt, id)). */
export interface KeyListQuery {
  accountId?: string;
  role?: KeyRole;
  revoked?: boolean;
  /** Only keys whose name contains this text (any case). */
  nameContains?: string;
  /** Only keys that sort after this position in (createdAt DESC, id DESC). */
  before?: { createdAt: number; id: string };
  limit: number;
}

export interface KeyStore {
  /**
   * Stores a key; with `account`, that new account (and its starting grant) in the same transaction,
   * and so `audit` (G302).
   */
  insert(key: ApiKeyRecord & { hash: string }, account?: NewAccount, audit?: NewAuditEntry): Promise<void>;
  /**
   * The active (not revoked) key with this SHA-256 hash: its current secret's, or a secret a rotation
   * replaced (then with `graceUntil`, whether or not that time has passed: the caller decides, G307).
   * Expired keys are answered too (with `expiresAt`): the caller refuses them (G305).
   */
  findActiveByHash(hash: string): Promise<ApiKeyRecord | undefined>;
  findByHash(hash: string): Promise<ApiKeyRecord | undefined>;
  list(): Promise<ApiKeyRecord[]>;
  /** The key with this id (revoked or not), with `lastUsed`. */
  get(id: string): Promise<ApiKeyRecord | undefined>;
  /** One page of keys, newest first, with `lastUsed` (G303). */
  listPage(query: KeyListQuery): Promise<ApiKeyRecord[]>;
  /** Changes a key (revoked or not) and writes `audit` in the same transaction; the key as changed, or undefined for an unknown id. */
  update(id: string, patch: KeyPatch, audit?: NewAuditEntry): Promise<ApiKeyRecord | undefined>;
  /**
   * A new secret for an active key (G307): its hash replaces the current one; the replaced one stays
   * valid until `graceUntil` (null: not at all). Secrets replaced earlier whose time is over are
   * forgotten. False when no active key has this id.
   */
  rotate(id: string, next: { hash: string; prefix: string }, graceUntil: number | null, now: number, audit?: NewAuditEntry): Promise<boolean>;
  /** Revokes the key with this id (and every secret of it, G307); false when no active key has it. */
  revoke(id: string, now: number, audit?: NewAuditEntry): Promise<boolean>;
  /** Moves keys' `lastUsed` forward to these times (Unix ms), never back (G308): one write for the batch. */
  recordLastUsed(uses: ReadonlyMap<string, number>): Promise<void>;
  /** Sets (null: clears) a key's own rate limits; false when no key has this id. */
  setRateLimits(id: string, limits: { submitRate: number | null; queryRate: number | null }): Promise<boolean>;
  /** Sets (null: clears) a key's spending cap (G207), micro-credits; false when no key has this id. */
  setSpendCap(id: string, capMicro: number | null): Promise<boolean>;
  /** Sets (null: clears) a key's default webhook URL (G208); false when no key has this id. */
  setWebhookUrl(id: string, url: string | null): Promise<boolean>;
}
