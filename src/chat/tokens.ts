/**
 * Token counting with a real tokenizer (gpt-tokenizer, o200k_base: the encoding of OpenAI's current
 * chat models). Special-token text in user input (`<|endoftext|>`) is counted as plain text.
 *
 * Counting is bounded (G82): a text of at most {@link MAX_RUN_CHARS} characters is
 * counted at once on the calling thread (its cost is bounded by its length); anything longer goes
 * to the counting thread (token-worker.ts), which also cuts runs of more than that many characters
 * without whitespace into pieces, so no text can hold the event loop or the thread for long.
 */
import { decodeGenerator, encode } from 'gpt-tokenizer';
import { countOnWorker, MAX_RUN_CHARS } from './token-worker.js';
import type { ChatMessage, ChatRequest } from './types.js';

export { MAX_RUN_CHARS } from './token-worker.js';

const PLAIN = { disallowedSpecial: new Set<string>() };

/** Fixed overhead of each message (OpenAI's chat format: `<|start|>role ... <|end|>`), tokens. */
export const TOKENS_PER_MESSAGE = 3;
/** Every reply is primed with `<|start|>assistant<|message|>`, tokens. */
export const TOKENS_REPLY_PRIMING = 3;
/** An image or video part, counted like an OpenAI low-detail image, tokens. */
export const TOKENS_PER_MEDIA_PART = 85;
/** Longest text {@link textPieces} accepts: it runs on the event loop. */
export const MAX_PIECES_TEXT = 4096;

/** Token counts of several texts, in order: short ones here, the rest together on the counting thread. */
export async function countTexts(texts: readonly string[]): Promise<number[]> {
  const counts = texts.map((t) => (t.length <= MAX_RUN_CHARS ? (t.length === 0 ? 0 : encode(t, PLAIN).length) : -1));
  const long = texts.filter((t) => t.length > MAX_RUN_CHARS);
  if (long.length === 0) return counts;
  const counted = await countOnWorker(long);
  let next = 0;
  return counts.map((c) => (c >= 0 ? c : counted[next++]!));
}

export async function countTextTokens(text: string): Promise<number> {
  return (await countTexts([text]))[0]!;
}

/**
 * Prompt tokens of a request, the way OpenAI counts chat prompts (roughly; G37): reply priming, then
 * per message its overhead, its role, each text part and a fixed amount per image or video.
 */
export async function countPromptTokens(request: Pick<ChatRequest, 'messages'>): Promise<number> {
  const texts: string[] = [];
  let fixed = TOKENS_REPLY_PRIMING;
  const add = (m: ChatMessage): void => {
    fixed += TOKENS_PER_MESSAGE;
    texts.push(m.role);
    if (typeof m.content === 'string') texts.push(m.content);
    else for (const part of m.content) if (part.type === 'text') texts.push(part.text); else fixed += TOKENS_PER_MEDIA_PART;
  };
  request.messages.forEach(add);
  return (await countTexts(texts)).reduce((sum, n) => sum + n, fixed);
}

/**
 * A text as the token groups a model would stream: each piece decodes to whole characters (a
 * character spread over several tokens, as many CJK characters and emoji are, is one piece), and
 * `tokens` says how many tokens it took. The pieces join to `text` exactly. For short texts only
 * (at most {@link MAX_PIECES_TEXT} characters: the sandbox's replies), as it runs on the event loop.
 *
 * gpt-tokenizer's `decode` keeps a partial character of one call in a shared streaming decoder and
 * prepends it to the next call's output, so partial token lists are never decoded here: the whole
 * list goes through `decodeGenerator` (which ends on a character boundary, leaving the decoder clean)
 * and the tokens it pulled are counted per piece.
 */
export function textPieces(text: string): Array<{ text: string; tokens: number }> {
  if (text.length > MAX_PIECES_TEXT) throw new RangeError(`textPieces takes at most ${MAX_PIECES_TEXT} characters (got ${text.length})`);
  const tokens = encode(text, PLAIN);
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
