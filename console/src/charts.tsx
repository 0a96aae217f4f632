/** The console's charts: small SVG charts (no chart library: the bundle budget, G366), each with its numbers in words. */

export interface Bar {
  label: string;
  value: number;
}

/**
 * A small SVG bar chart (no chart library: the bundle budget, G366), its numbers in its accessible
 * name for screen readers. No bars says `empty` ("Nothing yet." unless the caller says what is missing).
 */
export function BarChart({ title, bars, unit = '', empty = 'Nothing yet.' }: { title: string; bars: Bar[]; unit?: string; empty?: string }) {
  if (bars.length === 0)
    return (
      <figure className="chart">
        <figcaption>{title}</figcaption>
        <p className="hint">{empty}</p>
      </figure>
    );
  const max = Math.max(...bars.map((b) => b.value), 1e-9);
  const rowH = 22;
  const width = 360;
  const labelW = 130;
  return (
    <figure className="chart">
      <figcaption>{title}</figcaption>
      <svg
        viewBox={`0 0 ${width} ${bars.length * rowH + 4}`}
        role="img"
        aria-label={`${title}: ${bars.map((b) => `${b.label} ${round(b.value)}${unit}`).join(', ')}`}
      >
        {bars.map((b, i) => {
          const w = Math.max(1, ((width - labelW - 60) * b.value) / max);
          return (
            <g key={b.label} transform={`translate(0 ${i * rowH + 2})`}>
              <text x={labelW - 6} y={14} textAnchor="end" className="chart-label">
                {b.label.length > 18 ? `${b.label.slice(0, 17)}…` : b.label}
              </text>
              <rect x={labelW} y={3} width={w} height={rowH - 8} className="chart-bar" />
              <text x={labelW + w + 4} y={14} className="chart-value">
                {round(b.value)}
                {unit}
              </text>
            </g>
          );
        })}
      </svg>
    </figure>
  );
}

const round = (n: number): string => (Number.isInteger(n) ? String(n) : n.toFixed(2));

/** Colours of the keys of a chart that are no status (Usage's models, accounts ...), in turn; each at least 3:1 on white. */
const COLORS = ['#0b5cad', '#c2410c', '#15803d', '#7e22ce', '#a16207', '#be123c', '#0e7490', '#4d7c0f'];

/**
 * One colour per task status in every chart (G430), each at least 3:1 on white (a chart's marks,
 * WCAG 1.4.11) and told apart by more than hue: the legend names each, in the order of the stack
 * (bottom first), a white line parts two stacked segments, and each segment's title names it.
 */
export const STATUS_COLORS: Readonly<Record<string, string>> = {
  submitted: '#7e22ce', // purple
  queued: '#a16207', // amber
  processing: '#0e7490', // teal
  completed: '#0b5cad', // blue
  failed: '#a4161a', // red
  cancelled: '#4a5360', // grey
};

const colorOf = (key: string, n: number): string => STATUS_COLORS[key] ?? COLORS[n % COLORS.length]!;

export interface Column {
  label: string;
  parts: Record<string, number>;
}

/**
 * Stacked SVG columns: one per bucket, one colour per key (a status has its own, {@link STATUS_COLORS}),
 * with a legend (the numbers go in a table beside it). Columns that are all zero say "Nothing in
 * this period.": the columns are a period's buckets, and there may have been activity before it.
 */
export function StackedColumns({ title, keys, columns }: { title: string; keys: string[]; columns: Column[] }) {
  const totals = columns.map((c) => Object.values(c.parts).reduce((a, b) => a + b, 0));
  if (totals.every((t) => t === 0))
    return (
      <figure className="chart">
        <figcaption>{title}</figcaption>
        <p className="hint">Nothing in this period.</p>
      </figure>
    );
  const max = Math.max(...totals, 1e-9);
  const w = 360;
  const h = 160;
  const col = Math.min(w / columns.length, 48); // a few buckets stay narrow columns, not slabs
  const every = Math.ceil(columns.length / 6); // at most 6 labels under the columns: apart at 375 px too
  // counted from the latest column, which is always labelled (the newest bucket, where the data is
  // likeliest): the first label then falls a step or so in, not cut by the left edge
  const labelled = (i: number): boolean => (columns.length - 1 - i) % every === 0;
  const last = columns.length - 1;
  return (
    <figure className="chart">
      <figcaption>{title}</figcaption>
      <svg
        className="columns"
        viewBox={`0 0 ${w} ${h + 20}`}
        role="img"
        aria-label={`${title}: ${columns.map((c, i) => `${c.label} ${round(totals[i]!)}`).join(', ')}`}
      >
        {columns.map((c, i) => {
          let y = h;
          return (
            <g key={c.label} transform={`translate(${i * col} 0)`}>
              {keys.map((k, n) => {
                const bar = ((c.parts[k] ?? 0) / max) * (h - 10);
                y -= bar;
                return bar > 0 ? (
                  <rect key={k} x={col * 0.15} y={y} width={col * 0.7} height={bar} fill={colorOf(k, n)} stroke="#fff" strokeWidth={0.75}>
                    <title>{`${c.label} ${k}: ${round(c.parts[k] ?? 0)}`}</title>
                  </rect>
                ) : null;
              })}
              {labelled(i) && (
                // the last label of narrow columns ends at the right edge rather than past it
                <text x={i === last && col < 32 ? col : col / 2} y={h + 14} textAnchor={i === last && col < 32 ? 'end' : 'middle'} className="chart-label">
                  {c.label}
                </text>
              )}
            </g>
          );
        })}
      </svg>
      <ul className="legend" aria-label="Legend, from the bottom of each column up">
        {keys.map((k, n) => (
          <li key={k}>
            <span className="swatch" style={{ background: colorOf(k, n) }} />
            {k}
          </li>
        ))}
      </ul>
    </figure>
  );
}
