import { useState } from 'react';
import type { AdminAuditLog } from '../../../src/contract/admin-audit.js';
import { AUDIT_ACTIONS } from '../../../src/contract/audit-actions.js';
import { api, when } from '../api.js';
import { EmptyRow, ErrorNote, Pager, TableWrap, useCursor, useDebounced, useLoad } from '../ui.js';

/** Who made a change: the key's name with its id (G449), or `cli` / `bootstrap`. */
function Actor({ id, name }: { id: string; name: string | null }) {
  if (name === null) return <>{id}</>;
  return (
    <>
      {name}
      <br />
      <code>{id}</code>
    </>
  );
}

/** The audit log, newest first, filtered by action, actor and target (each an exact id). */
export function AuditPage() {
  const [action, setAction] = useState('');
  const [actor, setActor] = useState('');
  const [target, setTarget] = useState('');
  const [actorFilter] = useDebounced(actor.trim());
  const [targetFilter] = useDebounced(target.trim());
  const filters = new URLSearchParams({ ...(action && { action }), ...(actorFilter && { actor: actorFilter }), ...(targetFilter && { target: targetFilter }) });
  const page = useCursor(filters.toString());
  const query = new URLSearchParams({ limit: '100', ...Object.fromEntries(filters), ...(page.cursor && { cursor: page.cursor }) });
  const { data, error, reload } = useLoad(() => api<AdminAuditLog>('GET', `/admin/v1/audit?${query}`), [query.toString()]);
  const emptyText =
    filters.toString() === '' ? 'No changes yet.' : targetFilter && !action && !actorFilter ? 'No changes to this target.' : 'No changes match these filters.';
  return (
    <div>
      <div className="filters">
        <div className="field">
          <label htmlFor="audit-action">Action</label>
          <select id="audit-action" value={action} onChange={(e) => setAction(e.target.value)}>
            <option value="">any</option>
            {AUDIT_ACTIONS.map((a) => (
              <option key={a} value={a}>
                {a}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor="audit-actor">Actor</label>
          <input id="audit-actor" value={actor} onChange={(e) => setActor(e.target.value)} aria-describedby="audit-ids" />
        </div>
        <div className="field">
          <label htmlFor="audit-target">Target</label>
          <input id="audit-target" value={target} onChange={(e) => setTarget(e.target.value)} aria-describedby="audit-ids" />
        </div>
      </div>
      <p id="audit-ids" className="hint">
        Actor and target match an id exactly: a key's id (key_...), an account's, a task's or a channel's; the actor may be cli or bootstrap.
      </p>
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
                <td>
                  <Actor id={e.actor} name={e.actor_name} />
                </td>
                <td>{e.action}</td>
                <td>{e.target}</td>
                <td>
                  <code className="details">{JSON.stringify(e.details)}</code>
                </td>
              </tr>
            ))}
            {data && data.data.length === 0 && !error && <EmptyRow columns={5} text={emptyText} />}
          </tbody>
        </table>
      </TableWrap>
      <Pager page={page} list={data} />
    </div>
  );
}
