import type pg from 'pg';
import { auditInsert, auditListSql, auditOfRow, type AuditRow } from '../audit-rows.js';
import type { AuditEntry, AuditQuery, AuditStore, NewAuditEntry } from '../types.js';

/** PostgreSQL audit log reads (G302); entries are appended by the changes' own transactions. */
export class PostgresAuditStore implements AuditStore {
  constructor(private readonly pool: pg.Pool) {}

  async list(query: AuditQuery): Promise<AuditEntry[]> {
    const { shape, text, values } = auditListSql(query, 'postgres');
    const { rows } = await this.pool.query<AuditRow>({ name: `mg_audit_list_${shape}`, text, values });
    return rows.map(auditOfRow);
  }

  async append(entry: NewAuditEntry): Promise<void> {
    await this.pool.query(auditInsert(entry, 'postgres'));
  }
}
