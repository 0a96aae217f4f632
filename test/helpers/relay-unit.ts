/**
 * What the relay provider's unit tests (a relay built alone, against a scripted or real upstream)
 * share: the key, a context, a chat call, a pic job, and the failure a call ended in. Test-only.
 */
import { expect } from 'vitest';
import type { ChatContext, ChatRequest } from '../../src/chat/types.js';
import { familyRequestOf } from '../../src/contract/family-request.js';
import { planPicTask } from '../../src/contract/pic.js';
import type { JobFacts, ProviderContext, ProviderJob } from '../../src/providers/types.js';
import { asBody, jobOfPlan, providerContext } from './provider-jobs.js';

export const KEY = 'mg_relay_test_key_0123456789abcdef';

/** A context whose media are URLs as given (the relay never reads bytes). */
export const context = (signal = new AbortController().signal): ProviderContext =>
  providerContext({
    signal,
    readMedia: async () => {
      throw new Error('not used');
    },
  });
export const chatContext = (upstreamModel = 'chat-2.5-flash'): ChatContext => ({ signal: new AbortController().signal, log: context().log, upstreamModel });
export const chatRequest: ChatRequest = { model: 'chat-2.5-flash', messages: [{ role: 'user', content: 'hello' }], stop: [] };

/** A pic job named as the caller named the model, with `changes`; `params` as given (even values no plan stores). */
export function picJob(changes: Partial<JobFacts> & { params?: Record<string, unknown> } = {}): ProviderJob {
  const { params, ...facts } = changes;
  const job = { ...jobOfPlan(planPicTask(asBody({ model: 'pic', prompt: 'errors' })), 'pic'), ...facts };
  return params ? { ...job, ...familyRequestOf('pic', null, params) } : job;
}

export async function failureOf(p: Promise<unknown>): Promise<Error> {
  const outcome = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(outcome, 'the call failed').toBeInstanceOf(Error);
  return outcome as Error;
}
