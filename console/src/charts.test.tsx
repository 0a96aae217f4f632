/**
 * The console's charts say what an empty chart means: a period's columns that are all zero say
 * "Nothing in this period." (there may have been activity before it), not "Nothing yet."; a bar
 * chart without bars says what its caller names, "Nothing yet." by default. Rendered to markup on
 * the server (React's own renderer), no browser.
 */
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { BarChart, StackedColumns } from './charts.js';

describe('console charts, empty', () => {
  it('stacked columns of a period that are all zero say "Nothing in this period."; one non-zero part draws the columns', () => {
    const columns = ['10:00', '11:00', '12:00'].map((label) => ({ label, parts: { completed: 0, failed: 0 } }));
    const empty = renderToStaticMarkup(<StackedColumns title="Tasks ended per hour" keys={['completed', 'failed']} columns={columns} />);
    expect(empty).toContain('Nothing in this period.');
    expect(empty).not.toContain('Nothing yet.');
    expect(empty).not.toContain('<svg');
    columns[1]!.parts.failed = 2;
    const drawn = renderToStaticMarkup(<StackedColumns title="Tasks ended per hour" keys={['completed', 'failed']} columns={columns} />);
    expect(drawn).toContain('<svg');
    expect(drawn).toContain('11:00 2');
    expect(drawn).not.toContain('Nothing in this period.');
  });

  it('a bar chart without bars says its caller\'s words, or "Nothing yet."', () => {
    expect(renderToStaticMarkup(<BarChart title="Tasks in flight by family" bars={[]} empty="Nothing in flight." />)).toContain('Nothing in flight.');
    expect(renderToStaticMarkup(<BarChart title="Credits spent by account" bars={[]} />)).toContain('Nothing yet.');
    expect(renderToStaticMarkup(<BarChart title="x" bars={[{ label: 'pic', value: 3 }]} />)).toContain('<svg');
  });
});
