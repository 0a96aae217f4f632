/**
 * Token counts for upstreams that report no `usage` (some llama.cpp / Ollama builds, streams cut
 * before their usage chunk): counted with gpt-tokenizer's o200k_base encoding (docs/API.md G55).
 * The tokenizer is loaded on first use only, so a gateway whose upstreams report usage never pays
 * for its tables.
 */
import type { ChatMessage, ChatUsage } from '../../chat/types.js';

/** Tokens an image part is counted as (OpenAI's price of a low-detail image). */
export const IMAGE_PART_TOKENS = 85;

type Counter = (text: string) => number;
let counter: Promise<Counter> | undefined;

function loadCounter(): Promise<Counter> {
  counter ??= import('gpt-tokenizer').then((m) => (text: string) => (text ? m.countTokens(text) : 0));
  return counter;
}

/** OpenAI's chat accounting: 3 tokens per message + role + content, 3 more to prime the reply. */
export async function countPromptTokens(messages: ChatMessage[]): Promise<number> {
  const count = await loadCounter();
  let total = 3;
  for (const m of messages) {
    total += 3 + count(m.role);
    if (typeof m.content === 'string') total += count(m.content);
    else for (const part of m.content) total += part.type === 'text' ? count(part.text) : IMAGE_PART_TOKENS;
  }
  return total;
}

export async function countCompletionTokens(text: string): Promise<number> {
  return (await loadCounter())(text);
}

/** The upstream's usage where it gave one, counted where it did not (field by field). */
export async function completeUsage(reported: Partial<ChatUsage> | undefined, messages: ChatMessage[], content: string): Promise<ChatUsage> {
  const prompt = reported?.prompt_tokens ?? await countPromptTokens(messages);
  const completion = reported?.completion_tokens ?? await countCompletionTokens(content);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

/** `usage` of an upstream JSON object, or undefined when absent or not numbers. */
export function readUsage(value: unknown): Partial<ChatUsage> | undefined {
  if (!value || typeof value !== 'object') return undefined;
  const u = value as Record<string, unknown>;
  const n = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? Math.round(v) : undefined);
  const out: Partial<ChatUsage> = {};
  const p = n(u.prompt_tokens);
  const c = n(u.completion_tokens);
  if (p !== undefined) out.prompt_tokens = p;
  if (c !== undefined) out.completion_tokens = c;
  return p === undefined && c === undefined ? undefined : out;
}
