import type Database from 'better-sqlite3';
import type { NewTask } from '../types.js';

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

/**
 * The `submitted` column of the usage aggregates (G321), counted per insert batch (G326): one
 * upsert per hour and day bucket and group of the batch, in the insert's transaction, instead of a
 * row trigger on `tasks` (two upserts per task, which more than tripled the cost of a submit's
 * insert). A task's account is its hold's, else its key's (as the trigger read it), else ''.
 */
export class SqliteSubmittedCounts {
  private readonly keyAccountStmt: Database.Statement;
  private readonly hourlyStmt: Database.Statement;
  private readonly dailyStmt: Database.Statement;

  constructor(db: Database.Database) {
    this.keyAccountStmt = db.prepare('SELECT account_id FROM api_keys WHERE id = ?').pluck();
    this.hourlyStmt = db.prepare(`INSERT INTO usage_hourly (hour, model, key_id, account_id, provider, submitted) VALUES (?, ?, ?, ?, ?, ?)
      ON CONFLICT (hour, model, key_id, account_id, provider) DO UPDATE SET submitted = submitted + excluded.submitted`);
    this.dailyStmt = db.prepare(`INSERT INTO usage_daily (day, model, key_id, account_id, provider, submitted) VALUES (?, ?, ?, ?, ?, ?)
      ON CONFLICT (day, model, key_id, account_id, provider) DO UPDATE SET submitted = submitted + excluded.submitted`);
  }

  /** Counts `inserted` (tasks written by the running transaction) into both tables; call it inside that transaction. */
  count(inserted: readonly NewTask[]): void {
    const keyAccounts = new Map<string, string>();
    const accountOf = (t: NewTask): string => {
      if (t.charge) return t.charge.accountId;
      let account = keyAccounts.get(t.ownerKeyId);
      if (account === undefined) {
        account = (this.keyAccountStmt.get(t.ownerKeyId) as string | null | undefined) ?? '';
        keyAccounts.set(t.ownerKeyId, account);
      }
      return account;
    };
    type Group = { bucket: number; t: NewTask; account: string; n: number };
    const add = (groups: Map<string, Group>, bucket: number, t: NewTask, account: string, n: number): void => {
      const id = `${bucket}\u0000${t.model}\u0000${t.ownerKeyId}\u0000${account}\u0000${t.provider}`;
      const group = groups.get(id);
      if (group) group.n += n;
      else groups.set(id, { bucket, t, account, n });
    };
    const hours = new Map<string, Group>();
    for (const t of inserted) add(hours, Math.floor(t.createdAt / HOUR_MS) * HOUR_MS, t, accountOf(t), 1);
    // a day's groups are its hours' groups added up
    const days = new Map<string, Group>();
    for (const g of hours.values()) add(days, Math.floor(g.bucket / DAY_MS) * DAY_MS, g.t, g.account, g.n);
    for (const g of hours.values()) this.hourlyStmt.run(g.bucket, g.t.model, g.t.ownerKeyId, g.account, g.t.provider, g.n);
    for (const g of days.values()) this.dailyStmt.run(g.bucket, g.t.model, g.t.ownerKeyId, g.account, g.t.provider, g.n);
  }
}
