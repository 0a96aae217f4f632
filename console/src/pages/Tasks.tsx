import { useEffect, useState } from 'react';
import type { TaskQueryReply } from '../../../src/contract/task-replies.js';
import { api, followTask, isFinished, when } from '../api.js';
import { FAMILY_IDS } from '../contract.js';
import { ErrorNote, messageOf, Pager, TableWrap, useCursor, useDebounced, useLoad } from '../ui.js';
import { TaskPreview } from './TaskPreview.js';

interface TaskList {
  object: 'list';
  data: TaskQueryReply[];
  has_more: boolean;
  next_cursor: string | null;
}

const STATUSES = ['queued', 'processing', 'completed', 'failed', 'cancelled'];

/**
 * The task shown, kept current (G431): while it is not finished, its status stream (one event at
 * each change of status or progress, ending with the final state) replaces it; the stream closes
 * when it is finished, another task is shown or the detail closes. `onFinished` once it ends.
 */
function useFollowedTask(
  task: TaskQueryReply | undefined,
  setTask: (update: (t: TaskQueryReply | undefined) => TaskQueryReply | undefined) => void,
  onFinished: () => void,
): string | undefined {
  const [error, setError] = useState<string>();
  const id = task?.id;
  const finished = task === undefined || isFinished(task.status);
  // biome-ignore lint/correctness/useExhaustiveDependencies: follows the task by its id while it is not finished
  useEffect(() => {
    setError(undefined);
    if (id === undefined || finished) return;
    return followTask(
      id,
      (next) => {
        setTask((t) => (t?.id === id ? next : t));
        if (isFinished(next.status)) onFinished();
      },
      (message) => setError(messageOf(message)),
    );
  }, [id, finished]);
  return error;
}

/** The caller's tasks (the task list API), with filters and a detail view. */
export function TasksPage() {
  const [status, setStatus] = useState('');
  const [family, setFamily] = useState('');
  const [model, setModel] = useState('');
  const [modelFilter, settleModel] = useDebounced(model.trim());
  const [selected, setSelected] = useState<TaskQueryReply>();
  const filters = new URLSearchParams({ ...(status && { status }), ...(family && { family }), ...(modelFilter && { model: modelFilter }) });
  const page = useCursor(filters.toString());
  const query = new URLSearchParams({ limit: '20', ...Object.fromEntries(filters), ...(page.cursor && { cursor: page.cursor }) });
  const { data, error, reload } = useLoad(() => api<TaskList>('GET', `/v1/tasks?${query}`), [query.toString()]);
  const followError = useFollowedTask(selected, setSelected, reload);
  return (
    <div>
      <form
        className="filters"
        onSubmit={(e) => {
          e.preventDefault();
          if (!settleModel()) reload();
        }}
      >
        <div className="field">
          <label htmlFor="task-status">Status</label>
          <select id="task-status" value={status} onChange={(e) => setStatus(e.target.value)}>
            <option value="">any</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor="task-family">Family filter</label>
          <select id="task-family" value={family} onChange={(e) => setFamily(e.target.value)}>
            <option value="">any</option>
            {FAMILY_IDS.map((f) => (
              <option key={f} value={f}>
                {f}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor="task-model">Model filter</label>
          <input id="task-model" value={model} onChange={(e) => setModel(e.target.value)} />
        </div>
        <button type="submit">Refresh</button>
      </form>
      <ErrorNote error={error} onRetry={reload} />
      <TableWrap>
        <table>
          <caption>Your tasks, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Task</th>
              <th scope="col">Model</th>
              <th scope="col">Status</th>
              <th scope="col">Progress</th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            {data?.data.map((t) => (
              <tr key={t.id}>
                <td>
                  <button type="button" className="link" onClick={() => setSelected(t)}>
                    {t.id}
                  </button>
                </td>
                <td>{t.model}</td>
                <td>{t.status}</td>
                <td>{t.progress}%</td>
                <td>{when(t.created)}</td>
              </tr>
            ))}
            {data && data.data.length === 0 && !error && (
              <tr>
                <td colSpan={5}>No tasks.</td>
              </tr>
            )}
          </tbody>
        </table>
      </TableWrap>
      <Pager page={page} list={data} />
      {selected && (
        <section className="panel" aria-labelledby="task-detail">
          <h2 id="task-detail">Task {selected.id}</h2>
          <dl className="facts-list">
            <dt>Model</dt>
            <dd>{selected.model}</dd>
            <dt>Status</dt>
            <dd aria-live="polite">
              {selected.status} ({selected.progress}%)
            </dd>
            <dt>Created</dt>
            <dd>{when(selected.created)}</dd>
          </dl>
          <ErrorNote error={followError} />
          <TaskPreview task={selected} />
          <button type="button" onClick={() => setSelected(undefined)}>
            Close
          </button>
        </section>
      )}
    </div>
  );
}
