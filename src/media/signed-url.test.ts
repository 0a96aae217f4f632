import { describe, expect, it } from 'vitest';
import { ResultUrlSigner } from './signed-url.js';

const signer = new ResultUrlSigner('s'.repeat(40), 'https://media.example.com');

function parts(url: string) {
  const u = new URL(url);
  const [, , taskId, name] = u.pathname.split('/');
  return { taskId: taskId!, name: name!, exp: u.searchParams.get('exp') ?? undefined, sig: u.searchParams.get('sig') ?? undefined };
}

describe('signed result URLs', () => {
  const url = signer.signResultUrl('task_abc', 'image.png', Date.now() + 60_000);

  it('are absolute on the public URL and verify', () => {
    expect(url).toMatch(/^https:\/\/media\.example\.com\/files\/task_abc\/image\.png\?exp=\d+&sig=[A-Za-z0-9_-]{43}$/);
    const p = parts(url);
    expect(signer.verify(p.taskId, p.name, p.exp, p.sig)).toBe('ok');
  });

  it.each([
    ['another task', (p: ReturnType<typeof parts>) => ({ ...p, taskId: 'task_abd' })],
    ['another file', (p: ReturnType<typeof parts>) => ({ ...p, name: 'image.jpg' })],
    ['a later expiry', (p: ReturnType<typeof parts>) => ({ ...p, exp: String(Number(p.exp) + 3600) })],
    ['a flipped signature character', (p: ReturnType<typeof parts>) => ({ ...p, sig: (p.sig![0] === 'A' ? 'B' : 'A') + p.sig!.slice(1) })],
    ['a truncated signature', (p: ReturnType<typeof parts>) => ({ ...p, sig: p.sig!.slice(0, 20) })],
    ['no signature', (p: ReturnType<typeof parts>) => ({ ...p, sig: undefined })],
    ['a non-numeric expiry', (p: ReturnType<typeof parts>) => ({ ...p, exp: '1e12' })],
  ])('refuse %s', (_name, tamper) => {
    const p = tamper(parts(url));
    expect(signer.verify(p.taskId, p.name, p.exp, p.sig)).toBe('invalid');
  });

  it('a signature from another secret is refused', () => {
    const other = new ResultUrlSigner('t'.repeat(40), 'https://media.example.com');
    const p = parts(other.signResultUrl('task_abc', 'image.png', Date.now() + 60_000));
    expect(signer.verify(p.taskId, p.name, p.exp, p.sig)).toBe('invalid');
  });

  it('expire at their expiry time', () => {
    const p = parts(signer.signResultUrl('task_abc', 'image.png', Date.now() - 1000));
    expect(signer.verify(p.taskId, p.name, p.exp, p.sig)).toBe('expired');
    const q = parts(signer.signResultUrl('task_abc', 'image.png', 2_000_000_000_000));
    expect(signer.verify(q.taskId, q.name, q.exp, q.sig, 2_000_000_001_000)).toBe('expired');
    expect(signer.verify(q.taskId, q.name, q.exp, q.sig, 1_999_999_999_000)).toBe('ok');
  });
});

describe('signed URL cache', () => {
  it('gives the same URL for the same file and expiry, a distinct one otherwise, bounded in entries', () => {
    const small = new ResultUrlSigner('s'.repeat(40), 'https://m.example.com', 2);
    const until = Date.now() + 60_000;
    const a = small.signResultUrl('task_a', 'image.png', until);
    expect(small.signResultUrl('task_a', 'image.png', until)).toBe(a);
    const b = small.signResultUrl('task_b', 'image.png', until);
    const c = small.signResultUrl('task_c', 'image.png', until);
    expect(new Set([a, b, c]).size).toBe(3);
    // the cache holds 2; the evicted URL is signed again, identically
    expect(small.signResultUrl('task_a', 'image.png', until)).toBe(a);
    expect(small.signResultUrl('task_a', 'image.png', until + 60_000)).not.toBe(a);
  });
});
