import { describe, expect, it } from 'vitest';
import { newTaskId, randomToken } from './ids.js';

describe('ids', () => {
  it('task ids are task_ + 128 bits of base64url, never repeated across pool refills', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 2000; i++) { // 2000 x 16 bytes: several refills of the 4 KiB pool
      const id = newTaskId();
      expect(id).toMatch(/^task_[A-Za-z0-9_-]{22}$/);
      seen.add(id);
    }
    expect(seen.size).toBe(2000);
  });

  it('tokens of odd sizes across the pool boundary are whole and distinct', () => {
    const tokens = Array.from({ length: 1000 }, () => randomToken(13));
    for (const t of tokens) expect(Buffer.from(t, 'base64url')).toHaveLength(13);
    expect(new Set(tokens).size).toBe(1000);
  });
});
