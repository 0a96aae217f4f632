/**
 * Calls a provider's gateway tests make of a listening gateway: a create (status and JSON body),
 * and the bytes behind a result URL, which must be at the gateway's own origin (re-hosted, G88).
 * Test-only.
 */
import { expect } from 'vitest';
import type { Harness } from './harness.js';

export async function submitJson(h: Harness, url: string, payload: Record<string, unknown>): Promise<{ status: number; json: Record<string, any> }> {
  const res = await h.app.inject({ method: 'POST', url, headers: h.auth(), payload });
  return { status: res.statusCode, json: res.json() };
}

/** A pic create the gateway must accept (200): the new task's id. */
export async function submitPic(h: Harness, model: string, prompt: string): Promise<string> {
  const res = await submitJson(h, '/v1/pic/images', { model, prompt });
  expect(res.status, JSON.stringify(res.json)).toBe(200);
  return res.json.id as string;
}

/** The bytes behind `url`, which must be one of `origin`'s own `/files/` URLs. */
export async function downloadServed(origin: string, url: string): Promise<Buffer> {
  expect(url.startsWith(`${origin}/files/`), url).toBe(true);
  const res = await fetch(url);
  expect(res.status).toBe(200);
  return Buffer.from(await res.arrayBuffer());
}

/** A request to a listening gateway with `key` as its bearer key (a JSON body when `payload` is given): status and JSON reply. */
export async function fetchJson(url: string, key: string, method = 'GET', payload?: unknown): Promise<{ status: number; json: Record<string, any> }> {
  const res = await fetch(url, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(payload !== undefined && { 'content-type': 'application/json' }) },
    ...(payload !== undefined && { body: JSON.stringify(payload) }),
  });
  return { status: res.status, json: (await res.json()) as Record<string, any> };
}
