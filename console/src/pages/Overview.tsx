import type { AdminAccountList } from '../../../src/contract/admin-accounts.js';
import type { AdminAuditLog } from '../../../src/contract/admin-audit.js';
import type { AdminKeyList } from '../../../src/contract/admin-keys.js';
import { api, when } from '../api.js';
import { BarChart, ErrorNote, useLoad } from '../ui.js';

/** The operator's overview: keys by role and state, credits by account, the latest changes. */
export function OverviewPage() {
  const { data, error } = useLoad(async () => {
    const [keys, accounts, audit] = await Promise.all([
      api<AdminKeyList>('GET', '/admin/v1/keys?limit=100'),
      api<AdminAccountList>('GET', '/admin/v1/accounts?limit=100'),
      api<AdminAuditLog>('GET', '/admin/v1/audit?limit=10'),
    ]);
    return { keys, accounts, audit };
  }, []);
  if (!data) return <ErrorNote error={error} />;
  const active = data.keys.data.filter((k) => !k.revoked);
  const count = (role: string): number => active.filter((k) => k.role === role).length;
  const top = [...data.accounts.data].sort((a, b) => b.spent - a.spent).slice(0, 8);
  return (
    <div>
      <dl className="stats">
        <div><dt>Active caller keys</dt><dd>{count('caller')}</dd></div>
        <div><dt>Active admin keys</dt><dd>{count('admin')}</dd></div>
        <div><dt>Revoked keys</dt><dd>{data.keys.data.length - active.length}</dd></div>
        <div><dt>Credits spent</dt><dd>{data.accounts.data.reduce((s, a) => s + a.spent, 0)}</dd></div>
        <div><dt>Credits held</dt><dd>{data.accounts.data.reduce((s, a) => s + a.held, 0)}</dd></div>
      </dl>
      <div className="charts">
        <BarChart title="Credits spent by account" bars={top.map((a) => ({ label: a.name, value: a.spent }))} />
        <BarChart title="Balance by account" bars={top.map((a) => ({ label: a.name, value: a.balance }))} />
      </div>
      <h2>Latest changes</h2>
      <ul className="plain">
        {data.audit.data.map((e) => <li key={e.id}>{when(e.created)}: {e.actor} {e.action} {e.target}</li>)}
      </ul>
    </div>
  );
}
