import { useState } from 'react';
import type { AdminChannelList, AdminChannelProbe } from '../../../src/contract/admin-channels.js';
import { api, when } from '../api.js';
import { BarChart } from '../charts.js';
import { ErrorNote, messageOf, TableWrap, useLoad } from '../ui.js';

/** Channels: circuit state, in flight, calls and latency of the last 5 minutes and hour, the last error; probe. */
export function ChannelsPage() {
  const { data, error, reload } = useLoad(() => api<AdminChannelList>('GET', '/admin/v1/channels'), []);
  const [probe, setProbe] = useState<string>();
  const run = async (id: string): Promise<void> => {
    setProbe(`Probing ${id}...`);
    try {
      const r = await api<AdminChannelProbe>('POST', `/admin/v1/channels/${encodeURIComponent(id)}/probe`, {});
      setProbe(
        `${id}: ${r.ok ? 'answers' : 'fails'} (${r.call}${r.status !== null ? `, HTTP ${r.status}` : ''}, ${r.latency_ms} ms)${r.error ? `: ${r.error}` : ''}`,
      );
      reload();
    } catch (err) {
      setProbe(`${id}: ${messageOf(err)}`);
    }
  };
  return (
    <div>
      <ErrorNote error={error} onRetry={reload} />
      {probe && <p role="status">{probe}</p>}
      {data && (
        <BarChart
          title="Mean latency of the last hour, ms"
          bars={data.data.map((c) => ({ label: c.id, value: c.last_hour.latency_ms ?? 0 }))}
          empty="No channels."
        />
      )}
      <TableWrap>
        <table>
          <caption>Channels</caption>
          <thead>
            <tr>
              <th scope="col">Channel</th>
              <th scope="col">Type</th>
              <th scope="col">Circuit</th>
              <th scope="col">In flight</th>
              <th scope="col">Last 5 min</th>
              <th scope="col">Last hour</th>
              <th scope="col">Last error</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {data?.data.map((c) => (
              <tr key={c.id}>
                <td>{c.id}</td>
                <td>{c.type ?? '-'}</td>
                <td>
                  {c.circuit.state}
                  {c.circuit.since ? ` since ${when(c.circuit.since)}` : ''}
                </td>
                <td>{c.in_flight}</td>
                <td>
                  {c.last_5m.calls} calls, {c.last_5m.faults} faults, {c.last_5m.errors} errors
                  {c.last_5m.latency_ms !== null ? `, ${Math.round(c.last_5m.latency_ms)} ms` : ''}
                </td>
                <td>
                  {c.last_hour.calls} calls, {c.last_hour.faults} faults, {c.last_hour.errors} errors
                  {c.last_hour.latency_ms !== null ? `, ${Math.round(c.last_hour.latency_ms)} ms` : ''}
                </td>
                <td>{c.last_error ? `${when(c.last_error.at)}: ${c.last_error.message}` : '-'}</td>
                <td>
                  <button type="button" onClick={() => void run(c.id)} aria-label={`Probe ${c.id}`}>
                    Probe
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableWrap>
    </div>
  );
}
