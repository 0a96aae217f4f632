/**
 * Usage for upstreams that report none (some llama.cpp / Ollama builds, streams cut before their
 * usage chunk): counted the way the gateway counts everywhere (src/chat/tokens.ts; G37, G55).
 */
import { countPromptTokens, countTextTokens } from '../../chat/tokens.js';
import type { ChatMessage, ChatUsage } from '../../chat/types.js';

/** The upstream's usage where it gave one, counted where it did not (field by field). */
export async function completeUsage(reported: Partial<ChatUsage> | undefined, messages: ChatMessage[], content: string): Promise<ChatUsage> {
  const prompt = reported?.prompt_tokens ?? (await countPromptTokens({ messages }));
  const completion = reported?.completion_tokens ?? (await countTextTokens(content));
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

/**
 * `usage` of an upstream JSON object, or undefined when absent or not numbers. A count that is not
 * a whole number of tokens a charge can be computed from exactly (negative, or beyond 2^53: `1e308`)
 * is not one: counted by the gateway instead, like a missing one (G465).
 */
export function readUsage(value: unknown): Partial<ChatUsage> | undefined {
  if (!value || typeof value !== 'object') return undefined;
  const u = value as Record<string, unknown>;
  const n = (v: unknown) => (typeof v === 'number' && v >= 0 && Number.isSafeInteger(Math.round(v)) ? Math.round(v) : undefined);
  const out: Partial<ChatUsage> = {};
  const p = n(u.prompt_tokens);
  const c = n(u.completion_tokens);
  if (p !== undefined) out.prompt_tokens = p;
  if (c !== undefined) out.completion_tokens = c;
  return p === undefined && c === undefined ? undefined : out;
}
