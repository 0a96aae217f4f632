import { useState } from 'react';
import type { AdminUsage } from '../../../src/contract/admin-usage.js';
import { api } from '../api.js';
import { type Column, StackedColumns } from '../charts.js';
import { ErrorNote, TableWrap, useLoad } from '../ui.js';
import { usageColumns } from '../usage-columns.js';

const GROUPS = ['model', 'account', 'provider', 'key'] as const;
const FIELDS = [
  'submitted',
  'completed',
  'failed',
  'cancelled',
  'video_seconds',
  'images',
  'chat_requests',
  'prompt_tokens',
  'completion_tokens',
  'credits_captured',
] as const;

/** The usage rows as CSV, one line per bucket and group. */
function csvOf(usage: AdminUsage): string {
  const quote = (v: unknown): string => (typeof v === 'string' && /[",\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : String(v ?? ''));
  const head = ['bucket', 'group', ...FIELDS].join(',');
  const rows = usage.data.map((r) => [new Date(r.bucket * 1000).toISOString(), r.group, ...FIELDS.map((f) => r[f])].map(quote).join(','));
  return `${[head, ...rows].join('\n')}\n`;
}

/** Usage by model, account, provider or key per day or hour: charts, the table, a CSV export. */
export function UsagePage() {
  const [groupBy, setGroupBy] = useState<(typeof GROUPS)[number]>('model');
  const [interval, setSpan] = useState<'day' | 'hour'>('day');
  const [field, setField] = useState<(typeof FIELDS)[number]>('credits_captured');
  const { data, error, reload } = useLoad(() => api<AdminUsage>('GET', `/admin/v1/usage?group_by=${groupBy}&interval=${interval}`), [groupBy, interval]);
  const groups = [...new Set((data?.data ?? []).map((r) => r.group ?? '(none)'))];
  // every bucket of the range, those with nothing at zero (G430)
  const columns: Column[] = data
    ? usageColumns(data, (parts, r) => {
        parts[r.group ?? '(none)'] = (parts[r.group ?? '(none)'] ?? 0) + r[field];
      })
    : [];
  const download = (): void => {
    if (!data) return;
    const link = document.createElement('a');
    link.href = URL.createObjectURL(new Blob([csvOf(data)], { type: 'text/csv' }));
    link.download = `mediagate-usage-${groupBy}-${interval}.csv`;
    link.click();
    setTimeout(() => URL.revokeObjectURL(link.href), 1000);
  };
  return (
    <div>
      <div className="filters">
        <div className="field">
          <label htmlFor="usage-group">Group by</label>
          <select id="usage-group" value={groupBy} onChange={(e) => setGroupBy(e.target.value as typeof groupBy)}>
            {GROUPS.map((g) => (
              <option key={g} value={g}>
                {g}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor="usage-interval">Interval</label>
          <select id="usage-interval" value={interval} onChange={(e) => setSpan(e.target.value as 'day' | 'hour')}>
            <option value="day">day (30 days)</option>
            <option value="hour">hour (24 hours)</option>
          </select>
        </div>
        <div className="field">
          <label htmlFor="usage-field">Measure</label>
          <select id="usage-field" value={field} onChange={(e) => setField(e.target.value as typeof field)}>
            {FIELDS.map((f) => (
              <option key={f} value={f}>
                {f}
              </option>
            ))}
          </select>
        </div>
        <button type="button" onClick={download} disabled={!data}>
          Export CSV
        </button>
      </div>
      <ErrorNote error={error} onRetry={reload} />
      {/* the charts and the table only with the numbers: an error is no "Nothing in this period." */}
      {data && !error && (
        <>
          <StackedColumns title={`${field} by ${groupBy} per ${interval}`} keys={groups} columns={columns} />
          <TableWrap>
            <table>
              <caption>
                {field} by {groupBy} per {interval}
              </caption>
              <thead>
                <tr>
                  <th scope="col">{interval}</th>
                  {groups.map((g) => (
                    <th key={g} scope="col">
                      {g}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {columns.map((c) => (
                  <tr key={c.label}>
                    <th scope="row" className="bucket">
                      {c.label}
                    </th>
                    {groups.map((g) => (
                      <td key={g}>{c.parts[g] ?? 0}</td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </TableWrap>
        </>
      )}
    </div>
  );
}
