import type { PollSeconds, Provider } from './types.js';

/** What a providers.json entry may tune of any provider: its calls in flight and its check intervals. */
export interface ProviderTuning {
  concurrency?: number | undefined;
  pollSeconds?: PollSeconds | undefined;
}

/** The tuning as Provider fields: a value given is set, one not given stays absent (the runner's defaults apply). */
export function tuningOf(options: ProviderTuning): Pick<Provider, 'concurrency' | 'pollSeconds'> {
  return {
    ...(options.concurrency !== undefined && { concurrency: options.concurrency }),
    ...(options.pollSeconds !== undefined && { pollSeconds: options.pollSeconds }),
  };
}
