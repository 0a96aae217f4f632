import type { AdminAccountList } from '../../../src/contract/admin-accounts.js';
import type { AdminAuditLog } from '../../../src/contract/admin-audit.js';
import type { AdminChannelList } from '../../../src/contract/admin-channels.js';
import type { ActivityCount, AdminTaskActivity } from '../../../src/contract/admin-task-activity.js';
import type { AdminTaskList } from '../../../src/contract/admin-tasks.js';
import type { AdminUsage } from '../../../src/contract/admin-usage.js';
import { api, when } from '../api.js';
import { BarChart, type Column, StackedColumns } from '../charts.js';
import { ErrorNote, useLoad } from '../ui.js';
import { usageColumns } from '../usage-columns.js';

const STATUS_PARTS = ['completed', 'failed', 'cancelled'] as const;
/** The counts of a minute (type-only import: no schema code in the bundle); a count the contract adds fails the type check. */
const ACTIVITY_COUNTS = ['submitted', 'queued', 'processing', 'completed', 'failed', 'cancelled'] as const satisfies readonly ActivityCount[];
export const EVERY_COUNT: [Exclude<ActivityCount, (typeof ACTIVITY_COUNTS)[number]>] extends [never] ? true : never = true;

/**
 * The operator's overview: tasks per minute by status over the last hour (the task activity, G370),
 * tasks per hour by how they ended (the usage aggregates), tasks in flight by family, failures,
 * credits spent, each channel's circuit, the latest changes.
 */
export function OverviewPage() {
  const { data, error, reload } = useLoad(async () => {
    const [activity, usage, processing, queued, channels, accounts, audit] = await Promise.all([
      api<AdminTaskActivity>('GET', '/admin/v1/task-activity?minutes=60'),
      api<AdminUsage>('GET', '/admin/v1/usage?group_by=model&interval=hour'),
      api<AdminTaskList>('GET', '/admin/v1/tasks?status=processing&limit=100'),
      api<AdminTaskList>('GET', '/admin/v1/tasks?status=queued&limit=100'),
      api<AdminChannelList>('GET', '/admin/v1/channels'),
      api<AdminAccountList>('GET', '/admin/v1/accounts?limit=100'),
      api<AdminAuditLog>('GET', '/admin/v1/audit?limit=8'),
    ]);
    return { activity, usage, processing, queued, channels, accounts, audit };
  }, []);
  if (!data) return <ErrorNote error={error} onRetry={reload} />;
  const minutes: Column[] = data.activity.data.map((m) => ({
    label: new Date(m.minute * 1000).toISOString().slice(11, 16),
    parts: Object.fromEntries(ACTIVITY_COUNTS.map((k) => [k, m[k]])),
  }));
  // every hour of the last 24, those where nothing ended at zero (G430)
  const hours = usageColumns(data.usage, (parts, r) => {
    for (const st of STATUS_PARTS) parts[st] = (parts[st] ?? 0) + r[st];
  });
  const sum = (f: 'failed' | 'completed' | 'submitted' | 'credits_captured'): number => data.usage.data.reduce((a, r) => a + r[f], 0);
  const inFlight = new Map<string, number>();
  for (const t of [...data.processing.data, ...data.queued.data]) inFlight.set(t.family, (inFlight.get(t.family) ?? 0) + 1);
  const open = data.channels.data.filter((c) => c.circuit.state !== 'closed');
  return (
    <div>
      <dl className="stats">
        <div>
          <dt>Submitted, 24 h</dt>
          <dd>{sum('submitted')}</dd>
        </div>
        <div>
          <dt>Failed, 24 h</dt>
          <dd>{sum('failed')}</dd>
        </div>
        <div>
          <dt>Credits spent, 24 h</dt>
          <dd>{Math.round(sum('credits_captured') * 100) / 100}</dd>
        </div>
        <div>
          <dt>In flight</dt>
          <dd>{data.processing.data.length + data.queued.data.length}</dd>
        </div>
        <div>
          <dt>Channels not closed</dt>
          <dd>
            {open.length} of {data.channels.data.length}
          </dd>
        </div>
      </dl>
      <div className="charts">
        <StackedColumns title="Tasks per minute by status (last hour): submitted, and each status entered" keys={[...ACTIVITY_COUNTS]} columns={minutes} />
        <StackedColumns title="Tasks ended per hour, by outcome (24 h)" keys={[...STATUS_PARTS]} columns={hours} />
        <BarChart title="Tasks in flight by family" bars={[...inFlight].map(([label, value]) => ({ label, value }))} empty="Nothing in flight." />
        <BarChart
          title="Channel calls in the last hour"
          bars={data.channels.data.map((c) => ({ label: `${c.id} (${c.circuit.state})`, value: c.last_hour.calls }))}
          empty="No channels."
        />
        <BarChart
          title="Credits spent by account"
          bars={[...data.accounts.data]
            .sort((a, b) => b.spent - a.spent)
            .slice(0, 8)
            .map((a) => ({ label: a.name, value: a.spent }))}
        />
      </div>
      <h2>Latest changes</h2>
      <ul className="plain">
        {data.audit.data.map((e) => (
          <li key={e.id}>
            {when(e.created)}: {e.actor} {e.action} {e.target}
          </li>
        ))}
      </ul>
    </div>
  );
}
