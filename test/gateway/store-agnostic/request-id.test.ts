import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../../helpers/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness({ workers: false });
});
afterAll(async () => {
  await h.close();
});

describe('request ids', () => {
  it('echo a well-formed x-request-id', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'abc-123' } });
    expect(res.headers['x-request-id']).toBe('abc-123');
  });
  it('replace a malformed one and make distinct ids otherwise, also on errors', async () => {
    const bad = await h.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'has spaces\nand newline' } });
    expect(bad.headers['x-request-id']).toMatch(/^[0-9a-f]{8}-[0-9a-z]+$/);
    const a = await h.app.inject({ method: 'GET', url: '/v1/result/x' });
    const b = await h.app.inject({ method: 'GET', url: '/v1/result/x' });
    expect(a.statusCode).toBe(401);
    expect(a.headers['x-request-id']).toMatch(/^[0-9a-f]{8}-[0-9a-z]+$/);
    expect(a.headers['x-request-id']).not.toBe(b.headers['x-request-id']);
  });
});
