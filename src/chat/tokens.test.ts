import { encode } from 'gpt-tokenizer';
import { describe, expect, it } from 'vitest';
import { countPromptTokens, countTexts, countTextTokens, MAX_RUN_CHARS, textPieces } from './tokens.js';

const exact = (text: string): number => encode(text, { disallowedSpecial: new Set() }).length;

describe('token counting (G37, G82)', () => {
  it.each([
    ['empty', ''],
    ['short', 'Hello, world!'],
    ['at the inline bound', 'x'.repeat(MAX_RUN_CHARS)],
    ['a long ordinary text', 'The quick brown fox jumps over the lazy dog. 狐狸跳过了懒狗。 '.repeat(400)],
    ['long runs just at the bound', `${'b'.repeat(MAX_RUN_CHARS)} `.repeat(50)],
    ['special-token text', '<|endoftext|> counted as text '.repeat(20)],
  ])('%s: exactly what the tokenizer counts', async (_name, text) => {
    expect(await countTextTokens(text)).toBe(exact(text));
  });

  it('a run longer than the bound is counted in pieces: at most one token more per cut, never fewer', async () => {
    for (const text of ['国'.repeat(3000), 'a'.repeat(5000), `start ${'😀'.repeat(1200)} end`]) {
      const cuts = Math.ceil(text.length / MAX_RUN_CHARS);
      const counted = await countTextTokens(text);
      expect(counted).toBeGreaterThanOrEqual(exact(text) - 1);
      expect(counted).toBeLessThanOrEqual(exact(text) + cuts);
    }
  });

  it('counts several texts in order, short and long mixed', async () => {
    const texts = ['a', '国'.repeat(1000), '', 'hello world '.repeat(100)];
    const counts = await countTexts(texts);
    expect(counts).toHaveLength(4);
    expect([counts[0], counts[2], counts[3]]).toEqual([exact('a'), 0, exact('hello world '.repeat(100))]);
    expect(counts[1]).toBeGreaterThanOrEqual(1000);
  });

  it('prompt tokens: priming + per message overhead, role and text + 85 per media part', async () => {
    const n = await countPromptTokens({
      messages: [
        { role: 'system', content: 'Be brief.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image_url', image_url: { url: 'https://x/y.png' } },
          ],
        },
      ],
    });
    expect(n).toBe(3 + (3 + exact('system') + exact('Be brief.')) + (3 + exact('user') + exact('What is this?') + 85));
  });

  it('textPieces is for short texts: it refuses long ones', async () => {
    await expect(textPieces('x'.repeat(5000))).rejects.toThrow(RangeError);
    expect((await textPieces('héllo 国')).map((p) => p.text).join('')).toBe('héllo 国');
    expect(await textPieces('')).toEqual([]);
  });
});
