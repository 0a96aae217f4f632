import { useState } from 'react';
import type { AccountReply } from '../../../src/contract/gateway-replies.js';
import { api } from '../api.js';
import { BarChart, ErrorNote, useLoad } from '../ui.js';

const PERIODS = [1, 7, 30, 90];

/** The caller's account: balance, held, spent, and usage per model over a chosen period, as a chart. */
export function AccountPage() {
  const [days, setDays] = useState(30);
  const { data, error } = useLoad(() => api<AccountReply>('GET', `/v1/account?days=${days}`), [days]);
  return (
    <div>
      <ErrorNote error={error} />
      {data && (
        <>
          <dl className="stats">
            <div><dt>Balance</dt><dd>{data.balance}</dd></div>
            <div><dt>Held</dt><dd>{data.held}</dd></div>
            <div><dt>Spent</dt><dd>{data.spent}</dd></div>
          </dl>
          <div className="field inline">
            <label htmlFor="account-days">Period (days)</label>
            <select id="account-days" value={days} onChange={(e) => setDays(Number(e.target.value))}>
              {PERIODS.map((d) => <option key={d} value={d}>{d}</option>)}
            </select>
          </div>
          <BarChart title={`Credits spent per model, last ${data.period.days} days`} bars={data.usage.map((u) => ({ label: u.model, value: u.spent }))} />
          <BarChart title={`Tasks and requests settled per model, last ${data.period.days} days`} bars={data.usage.map((u) => ({ label: u.model, value: u.settled }))} />
        </>
      )}
    </div>
  );
}
