/**
 * The web console in a real browser for the end-to-end tests: the console built (with Vite, when
 * console/dist is missing or older than console/src), Debian's chromium driven by playwright-core,
 * axe-core run in the page, and every console error of a page collected.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { chromium } from 'playwright-core';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
export const CONSOLE_DIR = path.join(ROOT, 'console');
/** Where the tests write their screenshots (gitignored). */
export const SCREENSHOTS = path.join(ROOT, 'test-results', 'console');
export const CHROMIUM = process.env.MEDIAGATE_TEST_CHROMIUM ?? '/usr/bin/chromium';

function newest(dir: string): number {
  let n = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    n = Math.max(n, e.isDirectory() ? newest(p) : fs.statSync(p).mtimeMs);
  }
  return n;
}

/** Builds console/dist when it is missing or older than a file of console/src (as the launcher does). */
export async function ensureConsoleBuilt(): Promise<void> {
  const built = path.join(CONSOLE_DIR, 'dist', 'index.html');
  if (fs.existsSync(built) && fs.statSync(built).mtimeMs >= newest(path.join(CONSOLE_DIR, 'src'))) return;
  const { build } = await import('vite');
  await build({ configFile: path.join(CONSOLE_DIR, 'vite.config.ts'), logLevel: 'warn' });
}

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
}

// browser globals inside page.evaluate callbacks (the test project is typed for Node, without the DOM)
declare const window: any;
declare const document: any;

const AXE_SOURCE = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/**
 * axe-core's serious and critical violations on the page. Its source is evaluated through the
 * DevTools protocol rather than added as a script tag: the console's CSP (G365) refuses inline
 * scripts, as it should.
 */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const axe = window.axe as { run(ctx: unknown, opts: object): Promise<{ violations: AxeViolation[] }> };
    const result = await axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target })) }));
  });
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

/**
 * Console errors and uncaught exceptions of a page. A failed request the test caused on purpose
 * (a 400, 401, 403) is logged by Chrome as an error too: those are listed apart, by status.
 */
export function collectErrors(page: Page): { errors: string[]; failedStatuses: number[] } {
  const out = { errors: [] as string[], failedStatuses: [] as number[] };
  page.on('pageerror', (err) => out.errors.push(`pageerror: ${err.message}`));
  page.on('console', (msg) => {
    if (msg.type() !== 'error') return;
    const failed = /Failed to load resource: the server responded with a status of (\d{3})/.exec(msg.text());
    if (failed) out.failedStatuses.push(Number(failed[1]));
    else out.errors.push(msg.text());
  });
  return out;
}
