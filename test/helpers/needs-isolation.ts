/**
 * Test files that must not share a module graph (and a process) with other files (G287).
 * vitest.config.ts runs them in the project `main-isolated`, a fresh graph per file;
 * test/unit/needs-isolation.test.ts fails when a file of the shared project mocks a module without
 * being listed here.
 */

/** They replace a module with `vi.mock`, which only takes effect in a fresh graph and would stay in place for the files after it. */
export const MOCKS_A_MODULE: readonly string[] = ['test/gateway/motion-cancel-running.test.ts', 'test/unit/provider-factory-new-type.test.ts'];

/**
 * They measure the process itself (the event loop's longest stall): in a worker that ran other
 * files first, the garbage those files left and their warmed-up code would be measured too.
 */
export const MEASURES_THE_PROCESS: readonly string[] = ['test/gateway/store-agnostic/chat-token-dos.test.ts'];

/**
 * They turn tracing on (MEDIAGATE_OTEL=on), which registers OpenTelemetry's tracer provider for
 * the whole process, once: a later file's gateway could not register its own, and its spans would
 * go to the first one's exporter.
 */
export const SETS_PROCESS_GLOBALS: readonly string[] = [
  'test/gateway/admin-audit.test.ts',
  'test/gateway/store-agnostic/tracing-otlp.test.ts',
  'test/gateway/store-agnostic/tracing.test.ts',
];

export const NEEDS_ISOLATION: readonly string[] = [...MOCKS_A_MODULE, ...MEASURES_THE_PROCESS, ...SETS_PROCESS_GLOBALS];
