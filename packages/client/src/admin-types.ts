/**
 * Request and reply shapes of a mediagate gateway's admin API (`/admin/v1/*`, its docs G300-G311),
 * written by hand like types.ts; the gateway's tests check them against its own schemas, both ways
 * (test/unit/client-types.test.ts).
 */

export type KeyRole = 'caller' | 'admin';

/** A key's own limits; null: the server's default (credits: no spending cap). */
export interface KeyLimits {
  /** Submits (POST, DELETE) per second, bursts of twice that. */
  submits: number | null;
  /** Queries (GET) per second, bursts of twice that. */
  queries: number | null;
  /** Spending cap, credits. */
  credits: number | null;
  /** Queued and processing tasks at once. */
  tasks_in_flight: number | null;
}

/** An API key: never its secret. Times are Unix seconds. */
export interface AdminKey {
  id: string;
  object: 'api_key';
  name: string;
  role: KeyRole;
  account_id: string;
  /** Model names and `family:*` patterns the key may use; null: every model. */
  models: string[] | null;
  expires_at: number | null;
  limits: KeyLimits;
  webhook_url: string | null;
  created: number;
  last_used: number | null;
  revoked: boolean;
  revoked_at: number | null;
}

/** A new key: its secret is in this answer only. */
export interface AdminKeyCreated extends AdminKey { key: string }
/** A rotated key: the new secret (this answer only) and until when the old one is still accepted. */
export interface AdminKeyRotated extends AdminKey { key: string; previous_valid_until: number | null }

export interface KeyCreateParams {
  name: string;
  role?: KeyRole;
  /** An existing account; absent: a new account of the key's own. */
  account_id?: string;
  models?: string[] | null;
  /** Unix seconds, in the future; null: never. */
  expires_at?: number | null;
  limits?: Partial<KeyLimits>;
  webhook_url?: string | null;
}

/** What to change (absent: unchanged). A key's role and account never change. */
export type KeyUpdateParams = Partial<Omit<KeyCreateParams, 'role' | 'account_id'>>;

export interface KeyRotateParams {
  /** How long the replaced secret is still accepted, seconds (0-2592000; default 0). */
  grace_seconds?: number;
}

export interface AdminListParams {
  /** 1-100 (default 20). */
  limit?: number;
  /** `next_cursor` of the previous page (same filters). */
  cursor?: string;
}

export interface KeyListParams extends AdminListParams {
  account_id?: string;
  role?: KeyRole;
  revoked?: boolean;
  /** Only keys whose name contains this text (any case). */
  q?: string;
}

export interface AdminList<T> {
  object: 'list';
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
}

/** Amounts in credits. */
export interface AdminAccount {
  id: string;
  object: 'account';
  name: string;
  created: number;
  balance: number;
  held: number;
  spent: number;
}

export interface AccountListParams extends AdminListParams { q?: string }

export type LedgerKind = 'grant' | 'hold' | 'capture' | 'release' | 'adjust';

export interface AdminLedgerEntry {
  id: number;
  object: 'ledger_entry';
  kind: LedgerKind;
  amount: number;
  /** A capture's or release's hold. */
  settled: number | null;
  key_id: string | null;
  task_id: string | null;
  request_id: string | null;
  model: string | null;
  note: string | null;
  created: number;
}

export interface LedgerParams extends AdminListParams { kind?: LedgerKind[] }

export interface GrantParams {
  /** Credits (at most 6 decimals, not 0); negative: taken back, at most what is available. */
  amount: number;
  note: string;
}

export interface AdminGrant {
  object: 'grant';
  entry: AdminLedgerEntry;
  account: AdminAccount;
}

export type AuditAction = 'key.create' | 'key.update' | 'key.revoke' | 'key.rotate' | 'account.create' | 'account.grant';

export interface AdminAuditEntry {
  id: number;
  object: 'audit_entry';
  created: number;
  /** The admin key's id, `cli` or `bootstrap`. */
  actor: string;
  action: AuditAction;
  target: string;
  request_id: string | null;
  details: Record<string, unknown>;
}

export interface AuditParams extends AdminListParams {
  actor?: string;
  action?: AuditAction;
  target?: string;
  /** Unix seconds or an ISO-8601 date-time with a time zone. */
  since?: number | string;
  until?: number | string;
}

export interface AdminSettings {
  object: 'settings';
  /** The effective configuration, every secret `[redacted]`. */
  settings: Record<string, unknown>;
}
