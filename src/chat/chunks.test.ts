import { describe, expect, it } from 'vitest';
import { ChatChunks } from './chunks.js';

describe('ChatChunks', () => {
  const chunks = new ChatChunks('chatcmpl-"x\\y', 1_700_000_000, 'chat-2.5-flash');

  it('a content chunk is exactly the JSON of the chunk object, whatever the text holds', () => {
    for (const text of ['hello', ' "quoted" \\ back', 'line\nbreak\ttab', '中文 🦊', '\u0000\u001f\u2028\u2029', '']) {
      expect(chunks.content(text)).toBe(JSON.stringify(chunks.chunk({ content: text }, null)));
      expect(JSON.parse(chunks.content(text)).choices[0].delta.content).toBe(text);
    }
  });

  it('role, finish and usage chunks have the contract shape', () => {
    expect(JSON.parse(chunks.role())).toEqual({
      id: 'chatcmpl-"x\\y',
      object: 'chat.completion.chunk',
      created: 1_700_000_000,
      model: 'chat-2.5-flash',
      choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }],
    });
    expect(JSON.parse(chunks.finish('length')).choices).toEqual([{ index: 0, delta: {}, finish_reason: 'length' }]);
    const usage = { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 };
    expect(JSON.parse(chunks.usage(usage))).toMatchObject({ choices: [], usage });
  });
});
