import { useState } from 'react';
import type { AdminAuditLog } from '../../../src/contract/admin-audit.js';
import { api, when } from '../api.js';
import { EmptyRow, ErrorNote, Pager, TableWrap, useCursor, useDebounced, useLoad } from '../ui.js';

/** The audit log, newest first, filtered by actor, action or target. */
export function AuditPage() {
  const [target, setTarget] = useState('');
  const [targetFilter] = useDebounced(target.trim());
  const page = useCursor(targetFilter);
  const query = new URLSearchParams({ limit: '100', ...(targetFilter && { target: targetFilter }), ...(page.cursor && { cursor: page.cursor }) });
  const { data, error, reload } = useLoad(() => api<AdminAuditLog>('GET', `/admin/v1/audit?${query}`), [query.toString()]);
  return (
    <div>
      <div className="field inline">
        <label htmlFor="audit-target">Target</label>
        <input id="audit-target" value={target} onChange={(e) => setTarget(e.target.value)} />
      </div>
      <ErrorNote error={error} onRetry={reload} />
      <TableWrap>
        <table>
          <caption>Changes made through the admin API and the CLI</caption>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Actor</th>
              <th scope="col">Action</th>
              <th scope="col">Target</th>
              <th scope="col">Details</th>
            </tr>
          </thead>
          <tbody>
            {data?.data.map((e) => (
              <tr key={e.id}>
                <td>{when(e.created)}</td>
                <td>{e.actor}</td>
                <td>{e.action}</td>
                <td>{e.target}</td>
                <td>
                  <code className="details">{JSON.stringify(e.details)}</code>
                </td>
              </tr>
            ))}
            {data && data.data.length === 0 && !error && <EmptyRow columns={5} text={target ? 'No changes to this target.' : 'No changes yet.'} />}
          </tbody>
        </table>
      </TableWrap>
      <Pager page={page} list={data} />
    </div>
  );
}
