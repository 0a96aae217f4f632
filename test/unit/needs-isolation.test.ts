/**
 * The shared module graph (G287): a test file that replaces a module (`vi.mock`, `vi.doMock`) runs
 * in a fresh graph, so it is listed in MOCKS_A_MODULE; a file listed there exists and does mock
 * something (the list names the files that need it, no more); a file listed in
 * MEASURES_THE_PROCESS exists and measures the event loop.
 */
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { MEASURES_THE_PROCESS, MOCKS_A_MODULE as MOCKING_FILES, SETS_PROCESS_GLOBALS } from '../helpers/needs-isolation.js';
import { filesUnder, read, ROOT } from '../helpers/docs-tree.js';

const TURNS_TRACING_ON = /MEDIAGATE_OTEL['"]?\s*:\s*['"]on['"]/;
const MOCKS_A_MODULE = /\bvi\s*\.\s*(?:do)?[mM]ock\s*\(/;

function testFiles(): string[] {
  return ['src', 'test']
    .flatMap((dir) => filesUnder(dir, (f) => f.endsWith('.test.ts')))
    .filter((f) => !f.startsWith('test/process/') && !f.startsWith('test/postgres/'));
}

describe('files that need a module graph of their own (G287)', () => {
  it('every test file that mocks a module is listed in MOCKS_A_MODULE', () => {
    const mocking = testFiles().filter((f) => MOCKS_A_MODULE.test(read(f)));
    expect(mocking.length).toBeGreaterThan(0);
    expect(mocking.filter((f) => !MOCKING_FILES.includes(f))).toEqual([]);
  });

  it('every test file that turns tracing on is listed in SETS_PROCESS_GLOBALS, and every file listed there does', () => {
    // a gateway started with it (test/gateway/); a settings test that only reads the value starts nothing
    const tracing = testFiles().filter((f) => f.startsWith('test/gateway/') && TURNS_TRACING_ON.test(read(f)));
    expect(tracing.length).toBeGreaterThan(0);
    expect(tracing.filter((f) => !SETS_PROCESS_GLOBALS.includes(f))).toEqual([]);
    expect(SETS_PROCESS_GLOBALS.filter((f) => !tracing.includes(f))).toEqual([]);
  });

  it('every listed file exists and does what it is listed for', () => {
    expect(MOCKING_FILES.filter((f) => !existsSync(`${ROOT}/${f}`) || !MOCKS_A_MODULE.test(read(f)))).toEqual([]);
    expect(MEASURES_THE_PROCESS.filter((f) => !existsSync(`${ROOT}/${f}`) || !/monitorEventLoopDelay|memoryUsage|cpuUsage/.test(read(f)))).toEqual([]);
  });

  it('the pattern sees the ways a module is mocked, and not a spy', () => {
    // built from parts, so that this file does not itself read as one that mocks a module
    const vi = 'vi';
    expect([`${vi}.mock('node:child_process', () => ({}))`, `${vi}.doMock("./x.js")`, `${vi} .mock(x)`].every((s) => MOCKS_A_MODULE.test(s))).toBe(true);
    expect([`${vi}.spyOn(store, 'put')`, `${vi}.mocked(fn)`, 'const mock = 1'].some((s) => MOCKS_A_MODULE.test(s))).toBe(false);
  });
});
