/**
 * The tokenizer thread (G295) gives the counts gpt-tokenizer gives on the calling thread: any text
 * whose runs without whitespace are at most MAX_RUN_CHARS long is counted exactly, and a reply's
 * pieces join to the text and add up to its token count.
 */
import fc from 'fast-check';
import { encode } from 'gpt-tokenizer';
import { describe, expect, it } from 'vitest';
import { countTexts, MAX_RUN_CHARS, textPieces } from '../../src/chat/tokens.js';

const exact = (text: string): number => encode(text, { disallowedSpecial: new Set() }).length;
/** Texts of words (ASCII, CJK, emoji, special-token text) no longer than the run bound, joined by whitespace. */
const word = fc
  .oneof(
    fc.string({ maxLength: 40 }),
    fc.string({ unit: 'grapheme', maxLength: 20 }),
    fc.constantFrom('<|endoftext|>', '国国国', '🤖🧪', 'héllo', 'x'.repeat(MAX_RUN_CHARS)),
  )
  .map((w) => w.replace(/\s/g, '').slice(0, MAX_RUN_CHARS));
const text = fc.array(word, { maxLength: 30 }).chain((words) => fc.constantFrom(' ', '\n', '  ').map((sep) => words.join(sep)));

describe('the tokenizer thread counts as gpt-tokenizer does (G295)', () => {
  it('counts: many texts in one message, in order', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(text, { minLength: 1, maxLength: 8 }), async (texts) => {
        expect(await countTexts(texts)).toEqual(texts.map(exact));
      }),
      { numRuns: 60 },
    );
  });

  it('reply pieces join to the text and add up to its tokens', async () => {
    await fc.assert(
      fc.asyncProperty(
        text.filter((t) => t.length <= 4096),
        async (t) => {
          const pieces = await textPieces(t);
          expect(pieces.map((p) => p.text).join('')).toBe(t);
          expect(pieces.reduce((n, p) => n + p.tokens, 0)).toBe(exact(t));
        },
      ),
      { numRuns: 60 },
    );
  });
});
