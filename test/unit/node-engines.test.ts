/**
 * The Node.js the project says it runs on (package.json `engines`, README) is one its build tools
 * run on: `npm start` builds the console with Vite when it is stale, and Vite 8 (rolldown) needs
 * 20.19 on the 20 line. package.json said >=20.9.0 and the README "Node.js 20 or newer".
 */
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';

const json = (file: string): { engines?: { node?: string } } => JSON.parse(fs.readFileSync(file, 'utf8'));

/** The lowest 20.x a range admits (`>=20.19.0`, `^20.19.0 || >=22.12.0`) as [minor, patch]. */
function floorOn20(range: string): [number, number] {
  const m = /(?:>=|\^)20\.(\d+)\.(\d+)/.exec(range);
  if (!m) throw new Error(`no 20.x floor in "${range}"`);
  return [Number(m[1]), Number(m[2])];
}

const atLeast = (a: [number, number], b: [number, number]): boolean => a[0] > b[0] || (a[0] === b[0] && a[1] >= b[1]);

describe('the Node.js version the project requires', () => {
  const ours = floorOn20(json('package.json').engines?.node ?? '');

  it.each(['vite', 'rolldown', '@vitejs/plugin-react'])('admits no Node 20 that %s refuses', (tool) => {
    const theirs = floorOn20(json(`node_modules/${tool}/package.json`).engines?.node ?? '');
    expect(atLeast(ours, theirs), `package.json engines 20.${ours.join('.')} < ${tool}'s 20.${theirs.join('.')}`).toBe(true);
  });

  it('is the one the README and the quickstart name', () => {
    const named = `Node.js 20.${ours[0]} or newer`;
    expect(fs.readFileSync('README.md', 'utf8')).toContain(named);
    expect(fs.readFileSync('docs/guides/quickstart.md', 'utf8')).toContain(named);
  });
});
