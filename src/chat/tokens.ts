/**
 * Token counting with a real tokenizer (gpt-tokenizer, o200k_base: the encoding of OpenAI's current
 * chat models). Special-token text in user input (`<|endoftext|>`) is counted as plain text.
 *
 * Every count runs on the tokenizer thread (token-worker.ts, G295), which loads gpt-tokenizer on the
 * first count and cuts long runs without whitespace into pieces of bounded cost (G82), so no text
 * can hold the event loop and a gateway that counts nothing never loads the tokenizer.
 */
import { countOnWorker, piecesOnWorker, type TextPiece } from './token-worker.js';
import type { ChatMessage, ChatRequest } from './types.js';

export { MAX_RUN_CHARS, type TextPiece } from './token-worker.js';

/** Fixed overhead of each message (OpenAI's chat format: `<|start|>role ... <|end|>`), tokens. */
export const TOKENS_PER_MESSAGE = 3;
/** Every reply is primed with `<|start|>assistant<|message|>`, tokens. */
export const TOKENS_REPLY_PRIMING = 3;
/** An image or video part, counted like an OpenAI low-detail image, tokens. */
export const TOKENS_PER_MEDIA_PART = 85;
/** Longest text {@link textPieces} accepts (the sandbox's replies are short; its cost grows with the length). */
export const MAX_PIECES_TEXT = 4096;

/** Token counts of several texts, in order, counted together on the tokenizer thread (empty texts are 0 without it). */
export async function countTexts(texts: readonly string[]): Promise<number[]> {
  if (texts.every((t) => t.length === 0)) return texts.map(() => 0);
  return countOnWorker([...texts]);
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
    else
      for (const part of m.content)
        if (part.type === 'text') texts.push(part.text);
        else fixed += TOKENS_PER_MEDIA_PART;
  };
  request.messages.forEach(add);
  return (await countTexts(texts)).reduce((sum, n) => sum + n, fixed);
}

/**
 * A text as the token groups a model would stream: each piece decodes to whole characters (a
 * character spread over several tokens, as many CJK characters and emoji are, is one piece), and
 * `tokens` says how many tokens it took. The pieces join to `text` exactly. For short texts only
 * (at most {@link MAX_PIECES_TEXT} characters: the sandbox's replies), cut on the tokenizer thread.
 */
export async function textPieces(text: string): Promise<TextPiece[]> {
  if (text.length > MAX_PIECES_TEXT) throw new RangeError(`textPieces takes at most ${MAX_PIECES_TEXT} characters (got ${text.length})`);
  if (text.length === 0) return [];
  return piecesOnWorker(text);
}
