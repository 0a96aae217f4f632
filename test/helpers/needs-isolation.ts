/**
 * Test files that must not share a module graph with other files (G287): they replace a module
 * with `vi.mock`, which only takes effect in a fresh graph and would stay in place for the files
 * after it. vitest.config.ts runs them in the project `main-isolated`; test/unit/needs-isolation.test.ts
 * fails when a file of the shared project mocks a module without being listed here.
 */
export const NEEDS_ISOLATION: readonly string[] = ['test/gateway/motion-cancel-running.test.ts'];
