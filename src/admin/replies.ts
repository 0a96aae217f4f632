/** The admin API's reply shapes from store records (times in Unix seconds, amounts in credits). */
import type { AdminAccount, AdminLedgerEntry } from '../contract/admin-accounts.js';
import type { AdminAuditEntry } from '../contract/admin-audit.js';
import type { AdminKey } from '../contract/admin-keys.js';
import { toCredits } from '../credits/money.js';
import type { AccountBalance, ApiKeyRecord, AuditEntry, LedgerEntry } from '../store/types.js';

const seconds = (ms: number): number => Math.floor(ms / 1000);
const secondsOrNull = (ms: number | null | undefined): number | null => (ms == null ? null : seconds(ms));

/** A key record: never the secret, its hash or its prefix. */
export function keyReply(k: ApiKeyRecord): AdminKey {
  return {
    id: k.id,
    object: 'api_key',
    name: k.name,
    role: k.role ?? 'caller',
    account_id: k.accountId,
    models: k.models == null ? null : [...k.models],
    expires_at: secondsOrNull(k.expiresAt),
    limits: {
      submits: k.submitRate ?? null,
      queries: k.queryRate ?? null,
      credits: k.spendCapMicro == null ? null : toCredits(k.spendCapMicro),
      tasks_in_flight: k.maxInFlight ?? null,
    },
    webhook_url: k.webhookUrl ?? null,
    created: seconds(k.createdAt),
    last_used: secondsOrNull(k.lastUsed),
    revoked: k.revokedAt !== null,
    revoked_at: secondsOrNull(k.revokedAt),
  };
}

export function accountReply(a: AccountBalance): AdminAccount {
  return {
    id: a.id,
    object: 'account',
    name: a.name,
    created: seconds(a.createdAt),
    balance: toCredits(a.availableMicro),
    held: toCredits(a.heldMicro),
    spent: toCredits(a.spentMicro),
  };
}

export function ledgerEntryReply(e: LedgerEntry): AdminLedgerEntry {
  return {
    id: e.id,
    object: 'ledger_entry',
    kind: e.kind,
    amount: toCredits(e.amountMicro),
    settled: e.settledMicro === null ? null : toCredits(e.settledMicro),
    key_id: e.keyId,
    task_id: e.taskId,
    request_id: e.requestId,
    model: e.model,
    note: e.note,
    created: seconds(e.createdAt),
  };
}

export function auditReply(e: AuditEntry): AdminAuditEntry {
  return {
    id: e.id,
    object: 'audit_entry',
    created: seconds(e.at),
    actor: e.actor,
    actor_name: e.actorName,
    action: e.action,
    target: e.target,
    request_id: e.requestId,
    details: e.details,
  };
}
