import type { AdminUsage } from '../../src/contract/admin-usage.js';
import type { Column } from './charts.js';

type UsageRow = AdminUsage['data'][number];

const WIDTH = { hour: 3600, day: 86_400 } as const;

/** A bucket's label: `MM-DD` for a day, `HH:MM` (UTC) for an hour. */
export const bucketLabel = (bucket: number, interval: AdminUsage['interval']): string => {
  const iso = new Date(bucket * 1000).toISOString();
  return interval === 'day' ? iso.slice(5, 10) : iso.slice(11, 16);
};

/**
 * One column per bucket of the usage answer's range, `from` to `to` (G430): the API leaves out a
 * bucket with nothing in it, so a quiet range would show a column or two and no time axis; those
 * are columns of zeros here. `add` adds a row's numbers to its column's parts.
 */
export function usageColumns(usage: AdminUsage, add: (parts: Record<string, number>, row: UsageRow) => void): Column[] {
  const width = WIDTH[usage.interval];
  const byBucket = new Map<number, Column>();
  for (let b = usage.from; b < usage.to; b += width) byBucket.set(b, { label: bucketLabel(b, usage.interval), parts: {} });
  for (const r of usage.data) {
    let c = byBucket.get(r.bucket);
    if (!c) {
      c = { label: bucketLabel(r.bucket, usage.interval), parts: {} }; // outside the range said: kept, not lost
      byBucket.set(r.bucket, c);
    }
    add(c.parts, r);
  }
  return [...byBucket].sort(([a], [b]) => a - b).map(([, c]) => c);
}
