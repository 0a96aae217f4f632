/** Who makes an admin change (G302): an admin key over HTTP, the `mediagate` CLI on the server, or the settings at start. */
import type { AuditAction, NewAuditEntry } from '../store/types.js';

export interface Actor {
  /** The admin key's id, `cli` or `bootstrap`. */
  id: string;
  /** The HTTP request's id; null outside a request. */
  requestId: string | null;
}

export const CLI_ACTOR: Actor = { id: 'cli', requestId: null };
export const BOOTSTRAP_ACTOR: Actor = { id: 'bootstrap', requestId: null };

/** The audit entry of a change by `actor` at `at` (Unix ms); `details` must hold no secret. */
export function auditEntry(actor: Actor, action: AuditAction, target: string, details: Record<string, unknown>, at: number): NewAuditEntry {
  return { at, actor: actor.id, action, target, requestId: actor.requestId, details };
}
