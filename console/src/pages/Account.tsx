import type { AccountReply } from '../../../src/contract/gateway-replies.js';
import { api } from '../api.js';
import { BarChart, type Column, StackedColumns } from '../charts.js';
import { ErrorNote, TableWrap, useLoad } from '../ui.js';

const DAYS = 7;

interface Daily {
  models: string[];
  days: Column[];
}

/**
 * Credits spent per model on each of the last days, from the account API alone: `?days=d` answers
 * the spending of the last d days, so day d's own is the difference between d and d - 1.
 */
async function daily(): Promise<{ now: AccountReply; series: Daily }> {
  const periods = await Promise.all(Array.from({ length: DAYS }, (_, i) => api<AccountReply>('GET', `/v1/account?days=${i + 1}`)));
  const spentIn = (p: AccountReply | undefined, model: string): number => p?.usage.find((u) => u.model === model)?.spent ?? 0;
  const models = [...new Set(periods.flatMap((p) => p.usage.map((u) => u.model)))].sort();
  const days = periods
    .map((p, i) => ({
      label: new Date((p.period.since + 86_400) * 1000).toISOString().slice(5, 10),
      parts: Object.fromEntries(models.map((m) => [m, Math.max(0, spentIn(p, m) - spentIn(periods[i - 1], m))])),
    }))
    .reverse();
  return { now: periods[DAYS - 1]!, series: { models, days } };
}

/** The caller's account: balance, held, spent, and usage per model over the last days, as charts. */
export function AccountPage() {
  const { data, error, reload } = useLoad(daily, []);
  return (
    <div>
      <ErrorNote error={error} onRetry={reload} />
      {data && !error && (
        <>
          <dl className="stats">
            <div>
              <dt>Balance</dt>
              <dd>{data.now.balance}</dd>
            </div>
            <div>
              <dt>Held</dt>
              <dd>{data.now.held}</dd>
            </div>
            <div>
              <dt>Spent</dt>
              <dd>{data.now.spent}</dd>
            </div>
          </dl>
          <div className="charts">
            <StackedColumns title={`Credits spent per model per day, last ${DAYS} days`} keys={data.series.models} columns={data.series.days} />
            <BarChart
              title={`Tasks and requests settled per model, last ${DAYS} days`}
              bars={data.now.usage.map((u) => ({ label: u.model, value: u.settled }))}
              empty="Nothing in this period."
            />
          </div>
          <TableWrap>
            <table>
              <caption>Credits spent per model per day</caption>
              <thead>
                <tr>
                  <th scope="col">Model</th>
                  {data.series.days.map((d) => (
                    <th key={d.label} scope="col">
                      {d.label}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {data.series.models.map((m) => (
                  <tr key={m}>
                    <th scope="row">{m}</th>
                    {data.series.days.map((d) => (
                      <td key={d.label}>{(d.parts[m] ?? 0).toFixed(2)}</td>
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
