/**
 * The webhook claim's rule, checked against its plain statement on random tables (G461, G480):
 * due = pending and `next_attempt_at <= now`; each key's due deliveries ranked by (time, id) give
 * their turn; a claim of `limit` takes them by (turn, time, id). The statement below is the one
 * G461 shipped (every due delivery ranked); the claim's query must answer the same ids in the same
 * order, on both of its ways (all due ranked when few, per key when many: `rankAllUpTo`), over ties
 * of time within and across keys, keys with only deliveries not yet due, delivered and failed
 * rows, NULL times, and ids and key names that sort differently by byte and by language.
 */
import { expect } from 'vitest';

export interface DeliveryCase {
  rows: Array<{ id: string; owner_key_id: string; status: 'pending' | 'delivered' | 'failed'; next_attempt_at: number | null }>;
  now: number;
  limit: number;
}

/** The rule as G461 wrote it (`now` and `limit` are placeholders of the dialect). */
export const ruleSql = (now: string, limit: string): string => `SELECT id FROM (SELECT id, next_attempt_at,
  ROW_NUMBER() OVER (PARTITION BY owner_key_id ORDER BY next_attempt_at, id) AS turn
  FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at <= ${now}) ranked ORDER BY turn, next_attempt_at, id LIMIT ${limit}`;

const NAMES = ['a', 'B', 'b', 'key-1', 'key_1', 'Key 2', 'é', 'e', 'z~', 'Ä'];

/** `count` cases from a fixed seed: 0-40 deliveries over 1-8 keys, times 0-6 (many ties), limits 1-20. */
export function deliveryCases(count: number, seed = 11): DeliveryCase[] {
  let state = seed;
  const next = (n: number): number => {
    state = (state * 48271) % 2147483647;
    return state % n;
  };
  const cases: DeliveryCase[] = [];
  for (let c = 0; c < count; c++) {
    const keys = NAMES.slice(0, 1 + next(8));
    const rows: DeliveryCase['rows'] = [];
    const n = next(41);
    for (let i = 0; i < n; i++) {
      const roll = next(10);
      rows.push({
        id: `${NAMES[next(NAMES.length)]}-${c}-${i}`,
        owner_key_id: keys[next(keys.length)]!,
        status: roll < 7 ? 'pending' : roll < 9 ? 'delivered' : 'failed',
        next_attempt_at: roll === 9 || next(12) === 0 ? null : next(7),
      });
    }
    cases.push({ rows, now: next(7), limit: [1, 2, 3, 5, 16, 20][next(6)]! });
  }
  return cases;
}

/**
 * Runs every case through `load` (replaces the table's rows), then the claim's query (`claim`) and
 * the rule (`rule`) for each `rankAllUpTo`, and expects the same ids in the same order.
 */
export async function expectClaimsFollowTheRule(
  cases: DeliveryCase[],
  load: (rows: DeliveryCase['rows']) => Promise<void>,
  claim: (rankAllUpTo: number, now: number, limit: number) => Promise<string[]>,
  rule: (now: number, limit: number) => Promise<string[]>,
): Promise<void> {
  let wide = 0;
  for (const [i, c] of cases.entries()) {
    await load(c.rows);
    const want = await rule(c.now, c.limit);
    const due = c.rows.filter((r) => r.status === 'pending' && r.next_attempt_at !== null && r.next_attempt_at <= c.now).length;
    for (const rankAllUpTo of [0, 3, 256]) {
      if (due > rankAllUpTo) wide++;
      expect(await claim(rankAllUpTo, c.now, c.limit), `case ${i}, rankAllUpTo ${rankAllUpTo}: ${JSON.stringify(c)}`).toEqual(want);
    }
  }
  expect(wide).toBeGreaterThan(cases.length / 2); // the per-key way was taken in most cases
}
