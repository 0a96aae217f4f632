/**
 * Jobs and contexts for tests of a provider on its own (no gateway): a job made from a validated
 * create request as the runner makes it, and a context whose media and progress a test decides.
 * Test-only.
 */
import { randomUUID } from 'node:crypto';
import type { SubmitPlan } from '../../src/contract/submit-plan.js';
import { createLogger } from '../../src/logger.js';
import type { ProviderContext, ProviderJob } from '../../src/providers/types.js';

/** A request body as the planners take it (tests build bodies the schema would have checked). */
export const asBody = (body: unknown) => body as never;

/** The job of a first attempt and generation of `plan`, run as `upstreamModel`. */
export function jobOfPlan(plan: SubmitPlan, upstreamModel: string): ProviderJob {
  const { amount: _amount, route: _route, traceparent: _traceparent, ...request } = plan;
  return { ...request, taskId: `task_${randomUUID()}`, upstreamModel, attempt: 1, generation: 0 };
}

/** A context that never aborts, logs nothing and has no media unless `overrides` says. */
export function providerContext(overrides: Partial<ProviderContext> = {}): ProviderContext {
  return {
    signal: new AbortController().signal,
    log: createLogger('silent'),
    workDir: '',
    reportProgress: () => undefined,
    readMedia: async (ref) => {
      throw new Error(`no medium ${ref.url} in this test`);
    },
    mediaUrl: (ref) => ref.url,
    ...overrides,
  };
}
