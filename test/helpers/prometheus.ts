/**
 * `/metrics` as a scraper reads it: parsed by an independent Prometheus text-format parser
 * (parse-prometheus-text-format). That parser folds the series of a labelled histogram into one
 * (it keeps its buckets and drops labels, counts and sums), so histogram counts are read from their
 * `_count` lines here, after the parser accepted the whole text and typed the family a histogram.
 * Test-only.
 */
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { expect } from 'vitest';
import type { Harness } from './harness.js';

type Families = ReturnType<typeof parsePrometheusTextFormat>;
export type Scrape = Families & { text: string };
export type Labels = Record<string, string>;

export async function scrape(h: Pick<Harness, 'app'>, token: string): Promise<Scrape> {
  const res = await h.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${token}` } });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
  const families = parsePrometheusTextFormat(res.body);
  for (const f of families) expect(f.help, `${f.name} has a HELP line`).not.toBe('');
  return Object.assign(families, { text: res.body });
}

function family(s: Families, name: string): Families[number] {
  const f = s.find((x) => x.name === name);
  if (!f) throw new Error(`no metric ${name} in the scrape`);
  return f;
}

const matches = (labels: Labels | undefined, want: Labels): boolean => Object.entries(want).every(([k, v]) => labels?.[k] === v);

/** The sum of a counter's or gauge's samples whose labels include `want`. */
export function sampleSum(s: Scrape, name: string, want: Labels = {}): number {
  return family(s, name)
    .metrics.filter((m) => matches(m.labels, want))
    .reduce((n, m) => n + Number(m.value), 0);
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** The total count of a histogram's series whose labels include `want` (their `_count` lines). */
export function countOf(s: Scrape, name: string, want: Labels = {}): number {
  expect(family(s, name).type).toBe('HISTOGRAM');
  let total = 0;
  for (const line of s.text.split('\n')) {
    const m = SAMPLE.exec(line);
    if (!m || m[1] !== `${name}_count`) continue;
    const labels = Object.fromEntries([...(m[2] ?? '').matchAll(LABEL)].map((l) => [l[1]!, l[2]!]));
    if (matches(labels, want)) total += Number(m[3]);
  }
  return total;
}

/** Every value of one label across a metric's samples. */
export function labelValues(s: Scrape, name: string, label: string): string[] {
  return [
    ...new Set(
      family(s, name)
        .metrics.map((m) => m.labels?.[label])
        .filter((v): v is string => v !== undefined),
    ),
  ].sort();
}
