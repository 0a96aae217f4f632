/** The audit log (G302). Part of the store contract (types.ts). */
import type { AuditAction } from '../contract/admin-audit.js';

/** What the admin API and the CLI changed (G302): append-only, written in the transaction of the change. */
export interface AuditEntry {
  id: number;
  /** Unix ms. */
  at: number;
  /** The admin key's id, `cli` (the `mediagate` command on the server) or `bootstrap` (a key from the settings at start). */
  actor: string;
  /** The actor key's name as it is now (read with the entry, G449); null for `cli`, `bootstrap` and a key no longer stored. */
  actorName: string | null;
  action: AuditAction;
  /** The id of the key or account changed. */
  target: string;
  /** The admin request's id (`x-request-id`); null for the CLI and the bootstrap. */
  requestId: string | null;
  /** What was asked, never a secret (no key, no hash). */
  details: Record<string, unknown>;
}

export type { AuditAction } from '../contract/admin-audit.js';

export type NewAuditEntry = Omit<AuditEntry, 'id' | 'actorName'>;

/** What `AuditStore.list` reads: entries newest first (keyset pagination on id). */
export interface AuditQuery {
  actor?: string;
  action?: AuditAction;
  target?: string;
  /** Only entries at or after this time (Unix ms). */
  since?: number;
  /** Only entries before this time (Unix ms). */
  until?: number;
  beforeId?: number;
  limit: number;
}

/** The audit log (G302); its entries are written by the changes themselves (`audit` arguments). */
export interface AuditStore {
  list(query: AuditQuery): Promise<AuditEntry[]>;
  /** Appends an entry of an action that is no store change of its own (a cancel, a probe; G325). */
  append(entry: NewAuditEntry): Promise<void>;
}
