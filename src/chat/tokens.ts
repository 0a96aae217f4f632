/**
 * Token counting with a real tokenizer (gpt-tokenizer, o200k_base: the encoding of OpenAI's current
 * chat models). Special-token text in user input (`<|endoftext|>`) is counted as plain text.
 */
import { decodeGenerator, encode } from 'gpt-tokenizer';
import type { ChatMessage, ChatRequest } from './types.js';

const PLAIN = { disallowedSpecial: new Set<string>() };

/** Fixed overhead of each message (OpenAI's chat format: `<|start|>role ... <|end|>`), tokens. */
export const TOKENS_PER_MESSAGE = 3;
/** Every reply is primed with `<|start|>assistant<|message|>`, tokens. */
export const TOKENS_REPLY_PRIMING = 3;
/** An image or video part, counted like an OpenAI low-detail image, tokens. */
export const TOKENS_PER_MEDIA_PART = 85;

export function encodeText(text: string): number[] {
  return encode(text, PLAIN);
}

export function countTextTokens(text: string): number {
  return text.length === 0 ? 0 : encodeText(text).length;
}

/** Tokens of one message: overhead + role + each text part + a fixed amount per image/video. */
export function countMessageTokens(message: ChatMessage): number {
  let n = TOKENS_PER_MESSAGE + countTextTokens(message.role);
  if (typeof message.content === 'string') return n + countTextTokens(message.content);
  for (const part of message.content) n += part.type === 'text' ? countTextTokens(part.text) : TOKENS_PER_MEDIA_PART;
  return n;
}

/** Prompt tokens of a request, the way OpenAI counts chat prompts (roughly; G37). */
export function countPromptTokens(request: Pick<ChatRequest, 'messages'>): number {
  return request.messages.reduce((sum, m) => sum + countMessageTokens(m), TOKENS_REPLY_PRIMING);
}

/**
 * A text as the token groups a model would stream: each piece decodes to whole characters (a
 * character spread over several tokens, as many CJK characters and emoji are, is one piece), and
 * `tokens` says how many tokens it took. The pieces join to `text` exactly.
 *
 * gpt-tokenizer's `decode` keeps a partial character of one call in a shared streaming decoder and
 * prepends it to the next call's output, so partial token lists are never decoded here: the whole
 * list goes through `decodeGenerator` (which ends on a character boundary, leaving the decoder clean)
 * and the tokens it pulled are counted per piece.
 */
export function textPieces(text: string): Array<{ text: string; tokens: number }> {
  const tokens = encodeText(text);
  for (let attempt = 0; attempt < 2; attempt++) {
    const pieces: Array<{ text: string; tokens: number }> = [];
    let pulled = 0;
    let counted = 0;
    const counting = { *[Symbol.iterator]() { for (const t of tokens) { pulled++; yield t; } } };
    for (const piece of decodeGenerator(counting)) {
      pieces.push({ text: piece, tokens: pulled - counted });
      counted = pulled;
    }
    if (pieces.length > 0) pieces[pieces.length - 1]!.tokens += pulled - counted;
    // A partial character left in the shared decoder by someone else's `decode` shows up as a
    // prefix here; that call flushed it, so one retry gives the clean result.
    if (pieces.map((p) => p.text).join('') === text) return pieces;
  }
  throw new Error('gpt-tokenizer did not decode its own encoding back to the same text');
}
