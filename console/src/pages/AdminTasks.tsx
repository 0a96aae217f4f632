import { useState } from 'react';
import type { AdminTaskDetail, AdminTaskList } from '../../../src/contract/admin-tasks.js';
import { api, when } from '../api.js';
import { FAMILY_IDS } from '../contract.js';
import { EmptyRow, ErrorNote, messageOf, Pager, TableWrap, useCursor, useLoad, useDebounced, usePending } from '../ui.js';
import { TaskPreview } from './TaskPreview.js';

const STATUSES = ['queued', 'processing', 'completed', 'failed', 'cancelled'];

/** One task of any tenant: its timeline, attempts, upstream reference, charges and webhook deliveries; cancel. */
function Detail({ id, onChanged }: { id: string; onChanged: () => void }) {
  const { data, error, reload } = useLoad(() => api<AdminTaskDetail>('GET', `/admin/v1/tasks/${encodeURIComponent(id)}`), [id]);
  const [actionError, setActionError] = useState<string>();
  const { pending, run } = usePending();
  const cancel = async (): Promise<void> => {
    setActionError(undefined);
    try {
      await api('POST', `/admin/v1/tasks/${encodeURIComponent(id)}/cancel`, {});
      reload();
      onChanged();
    } catch (err) {
      setActionError(messageOf(err));
    }
  };
  if (!data) return <ErrorNote error={error} onRetry={reload} />;
  return (
    <section className="panel" aria-labelledby="admin-task-title">
      <h2 id="admin-task-title">Task {data.id}</h2>
      <dl className="facts-list">
        <dt>Key</dt>
        <dd>{data.key_id}</dd>
        <dt>Account</dt>
        <dd>{data.account_id ?? '-'}</dd>
        <dt>Model</dt>
        <dd>
          {data.family} {data.model}
          {data.form ? ` (form ${data.form})` : ''}
        </dd>
        <dt>Status</dt>
        <dd>
          {data.status} ({data.progress}%)
        </dd>
        <dt>Provider</dt>
        <dd>{data.provider}</dd>
        <dt>Upstream</dt>
        <dd>
          {data.upstream
            ? `${data.upstream.provider_type ?? '?'} ${data.upstream.channel}: ${data.upstream.task_id ?? '-'} (generation ${data.upstream.generation})`
            : '-'}
        </dd>
        <dt>Credits</dt>
        <dd>
          {data.credits}
          {data.hold ? `; held ${data.hold.amount}${data.hold.settlement ? `, ${data.hold.settlement.kind} ${data.hold.settlement.amount}` : ''}` : ''}
        </dd>
      </dl>
      {data.cancellable ? (
        <button type="button" disabled={pending} onClick={() => void run(cancel)}>
          Cancel task
        </button>
      ) : (
        data.status === 'processing' && <p className="hint">This generation cannot be stopped at its provider; it ends on its own.</p>
      )}
      <ErrorNote error={actionError} />
      <TaskPreview task={data.view} />
      <h3>Timeline</h3>
      <ol className="plain">
        {data.timeline.map((e) => (
          <li key={e.at_ms + e.status}>
            {when(e.at)}: {e.from ?? 'submitted'} → {e.status} (attempt {e.attempt}, {e.provider}){e.error ? `: ${e.error}` : ''}
          </li>
        ))}
      </ol>
      <h3>Attempts</h3>
      <TableWrap>
        <table>
          <caption>Attempts</caption>
          <thead>
            <tr>
              <th scope="col">#</th>
              <th scope="col">Provider</th>
              <th scope="col">Started</th>
              <th scope="col">Ended</th>
              <th scope="col">Outcome</th>
              <th scope="col">Error</th>
            </tr>
          </thead>
          <tbody>
            {data.attempts.map((a) => (
              <tr key={a.attempt}>
                <td>{a.attempt}</td>
                <td>{a.provider}</td>
                <td>{when(a.started)}</td>
                <td>{when(a.ended)}</td>
                <td>{a.outcome ?? 'running'}</td>
                <td>{a.error ?? ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableWrap>
      <h3>Webhook deliveries</h3>
      {data.webhooks.length === 0 ? (
        <p className="hint">None.</p>
      ) : (
        <ul className="plain">
          {data.webhooks.map((w) => (
            <li key={w.id}>
              {w.url}: {w.status}, {w.attempts.length} attempt(s){w.attempts.at(-1)?.status_code ? `, last ${w.attempts.at(-1)?.status_code}` : ''}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

/** Every tenant's tasks, filtered; a task's detail. */
export function AdminTasksPage() {
  const [status, setStatus] = useState('');
  const [family, setFamily] = useState('');
  const [keyId, setKeyId] = useState('');
  const [keyFilter, settleKey] = useDebounced(keyId.trim());
  const [selected, setSelected] = useState<string>();
  const filters = new URLSearchParams({ ...(status && { status }), ...(family && { family }), ...(keyFilter && { key_id: keyFilter }) });
  const page = useCursor(filters.toString());
  const query = new URLSearchParams({ limit: '50', ...Object.fromEntries(filters), ...(page.cursor && { cursor: page.cursor }) });
  const { data, error, reload } = useLoad(() => api<AdminTaskList>('GET', `/admin/v1/tasks?${query}`), [query.toString()]);
  return (
    <div>
      <form
        className="filters"
        onSubmit={(e) => {
          e.preventDefault();
          if (!settleKey()) reload();
        }}
      >
        <div className="field">
          <label htmlFor="all-status">Status</label>
          <select id="all-status" value={status} onChange={(e) => setStatus(e.target.value)}>
            <option value="">any</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor="all-family">Family filter</label>
          <select id="all-family" value={family} onChange={(e) => setFamily(e.target.value)}>
            <option value="">any</option>
            {FAMILY_IDS.map((f) => (
              <option key={f} value={f}>
                {f}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor="all-key">Key id</label>
          <input id="all-key" value={keyId} onChange={(e) => setKeyId(e.target.value)} />
        </div>
        <button type="submit">Refresh</button>
      </form>
      <ErrorNote error={error} onRetry={reload} />
      <TableWrap>
        <table>
          <caption>Every tenant's tasks, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Task</th>
              <th scope="col">Key</th>
              <th scope="col">Model</th>
              <th scope="col">Provider</th>
              <th scope="col">Status</th>
              <th scope="col">Attempts</th>
              <th scope="col">Credits</th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            {data?.data.map((t) => (
              <tr key={t.id}>
                <td>
                  <button type="button" className="link" onClick={() => setSelected(t.id)}>
                    {t.id}
                  </button>
                </td>
                <td>{t.key_id}</td>
                <td>{t.model}</td>
                <td>{t.provider}</td>
                <td>{t.status}</td>
                <td>{t.attempt_count}</td>
                <td>{t.credits}</td>
                <td>{when(t.created)}</td>
              </tr>
            ))}
            {data && data.data.length === 0 && !error && <EmptyRow columns={8} text="No tasks." />}
          </tbody>
        </table>
      </TableWrap>
      <Pager page={page} list={data} />
      {selected && <Detail id={selected} onChanged={reload} />}
    </div>
  );
}
