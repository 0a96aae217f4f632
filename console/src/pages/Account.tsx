import type { AccountReply } from '../../../src/contract/gateway-replies.js';
import { api } from '../api.js';
import { BarChart, ErrorNote, TableWrap, useLoad } from '../ui.js';

const DAYS = 7;
const COLORS = ['#0b5cad', '#c2410c', '#15803d', '#7e22ce', '#a16207', '#be123c', '#0e7490', '#4d7c0f'];

interface Daily { models: string[]; days: { label: string; spent: Record<string, number> }[] }

/**
 * Credits spent per model on each of the last days, from the account API alone: `?days=d` answers
 * the spending of the last d days, so day d's own is the difference between d and d - 1.
 */
async function daily(): Promise<{ now: AccountReply; series: Daily }> {
  const periods = await Promise.all(Array.from({ length: DAYS }, (_, i) => api<AccountReply>('GET', `/v1/account?days=${i + 1}`)));
  const spentIn = (p: AccountReply | undefined, model: string): number => p?.usage.find((u) => u.model === model)?.spent ?? 0;
  const models = [...new Set(periods.flatMap((p) => p.usage.map((u) => u.model)))].sort();
  const days = periods.map((p, i) => ({
    label: new Date((p.period.since + 86_400) * 1000).toISOString().slice(5, 10),
    spent: Object.fromEntries(models.map((m) => [m, Math.max(0, spentIn(p, m) - spentIn(periods[i - 1], m))])),
  })).reverse();
  return { now: periods[DAYS - 1]!, series: { models, days } };
}

/** Stacked columns: one per day, one color per model, with a legend; the numbers are in the table below. */
function DailyChart({ series }: { series: Daily }) {
  const totals = series.days.map((d) => Object.values(d.spent).reduce((a, b) => a + b, 0));
  const max = Math.max(...totals, 1e-9);
  const w = 360;
  const h = 160;
  const col = w / series.days.length;
  return (
    <figure className="chart">
      <figcaption>Credits spent per model per day, last {DAYS} days</figcaption>
      <svg viewBox={`0 0 ${w} ${h + 20}`} role="img" aria-label={`Credits spent per day: ${series.days.map((d, i) => `${d.label} ${totals[i]!.toFixed(2)}`).join(', ')}`}>
        {series.days.map((d, i) => {
          let y = h;
          return (
            <g key={d.label} transform={`translate(${i * col} 0)`}>
              {series.models.map((m, k) => {
                const bar = ((d.spent[m] ?? 0) / max) * (h - 10);
                y -= bar;
                return bar > 0 ? <rect key={m} x={col * 0.2} y={y} width={col * 0.6} height={bar} fill={COLORS[k % COLORS.length]} /> : null;
              })}
              <text x={col / 2} y={h + 14} textAnchor="middle" className="chart-label">{d.label}</text>
            </g>
          );
        })}
      </svg>
      <ul className="legend">
        {series.models.map((m, k) => <li key={m}><span className="swatch" style={{ background: COLORS[k % COLORS.length] }} />{m}</li>)}
      </ul>
    </figure>
  );
}

/** The caller's account: balance, held, spent, and usage per model over the last days, as charts. */
export function AccountPage() {
  const { data, error } = useLoad(daily, []);
  return (
    <div>
      <ErrorNote error={error} />
      {data && (
        <>
          <dl className="stats">
            <div><dt>Balance</dt><dd>{data.now.balance}</dd></div>
            <div><dt>Held</dt><dd>{data.now.held}</dd></div>
            <div><dt>Spent</dt><dd>{data.now.spent}</dd></div>
          </dl>
          <div className="charts">
            <DailyChart series={data.series} />
            <BarChart title={`Tasks and requests settled per model, last ${DAYS} days`} bars={data.now.usage.map((u) => ({ label: u.model, value: u.settled }))} />
          </div>
          <TableWrap>
            <table>
              <caption>Credits spent per model per day</caption>
              <thead><tr><th scope="col">Model</th>{data.series.days.map((d) => <th key={d.label} scope="col">{d.label}</th>)}</tr></thead>
              <tbody>
                {data.series.models.map((m) => (
                  <tr key={m}><th scope="row">{m}</th>{data.series.days.map((d) => <td key={d.label}>{(d.spent[m] ?? 0).toFixed(2)}</td>)}</tr>
                ))}
              </tbody>
            </table>
          </TableWrap>
        </>
      )}
    </div>
  );
}
