import { describe, expect, it } from 'vitest';
import { newTaskId, randomToken, sortableTime } from './ids.js';

describe('ids', () => {
  it('task ids are task_ + 8 time characters + 128 bits of base64url, never repeated across pool refills', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 2000; i++) {
      // 2000 x 16 bytes: several refills of the 4 KiB pool
      const id = newTaskId();
      expect(id).toMatch(/^task_[A-Za-z0-9_-]{30}$/);
      seen.add(id);
    }
    expect(seen.size).toBe(2000);
  });

  it('tokens of odd sizes across the pool boundary are whole and distinct', () => {
    const tokens = Array.from({ length: 1000 }, () => randomToken(13));
    for (const t of tokens) expect(Buffer.from(t, 'base64url')).toHaveLength(13);
    expect(new Set(tokens).size).toBe(1000);
  });

  it('the time part sorts as the times do (byte order, as SQLite compares TEXT)', () => {
    const times = [0, 1, 63, 64, 4095, 4096, Date.UTC(2026, 10, 23), Date.UTC(2026, 10, 23) + 1, Date.UTC(2100, 0, 1), 2 ** 48 - 1];
    const encoded = times.map(sortableTime);
    for (const e of encoded) expect(e).toMatch(/^[A-Za-z0-9_-]{8}$/);
    expect([...encoded].sort()).toEqual(encoded);
    const a = newTaskId(Date.UTC(2026, 10, 23, 12));
    const b = newTaskId(Date.UTC(2026, 10, 23, 12) + 1);
    expect(a < b).toBe(true);
  });
});
