/**
 * `/metrics` (G221-G226): off unless MEDIAGATE_METRICS_TOKEN is set, then only with that bearer
 * token; the scrape is read by an independent Prometheus text-format parser. Counters move with a
 * submit, its completion and chat calls; labels stay bounded (route patterns, no task ids, unknown
 * models as `other`, keys only when allow-listed).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { hashApiKey } from '../../src/auth/keys.js';
import { loadConfig } from '../../src/config.js';
import { mediaRefs } from '../../src/contract/media-refs.js';
import { createGateway } from '../../src/main/gateway.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { tempDir } from '../helpers/temp-root.js';
import { waitFor } from '../helpers/wait-for.js';
import { submitPic } from '../helpers/gateway-calls.js';
import { countOf, labelValues, scrape, sampleSum } from '../helpers/prometheus.js';
import { insertTask } from '../helpers/task-rows.js';
import { openMemoryStore } from '../helpers/migrated-store.js';

const TOKEN = 'metrics-token-0123456789';
const WATCHED = { id: 'key_watched01', secret: 'mg-watched-key-0123456789abcdef' };
let h: Harness | undefined;

afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function withMetrics(env: Record<string, string> = {}): Promise<Harness> {
  h = await createHarness({ env: { MEDIAGATE_METRICS_TOKEN: TOKEN, ...env } });
  return h;
}

describe('/metrics access', () => {
  it('is absent (404) when MEDIAGATE_METRICS_TOKEN is unset', async () => {
    h = await createHarness();
    const res = await h.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.statusCode).toBe(404);
    expect(res.json().error.code).toBe('route_not_found');
  });

  it('answers 401 without the token, with another one and with an API key; 200 with the token', async () => {
    const g = await withMetrics();
    for (const headers of [{}, { authorization: 'Bearer wrong-token-0123456789' }, { authorization: `Bearer ${TOKEN}x` }, g.auth(), { authorization: TOKEN }]) {
      const res = await g.app.inject({ method: 'GET', url: '/metrics', headers });
      expect(res.statusCode, JSON.stringify(headers)).toBe(401);
      expect(res.json().error.code).toBe('invalid_metrics_token');
      expect(res.headers['www-authenticate']).toBe('Bearer');
      expect(res.body).not.toContain(TOKEN);
    }
    // the scheme's name is case-insensitive (RFC 9110 11.1), as on the API routes
    expect((await g.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `bearer ${TOKEN}` } })).statusCode).toBe(200);
    const s = await scrape(g, TOKEN);
    // Node's process metrics are there too
    expect(sampleSum(s, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
  });

  it('a worker process (MEDIAGATE_ROLE=worker) answers /metrics too, and still no API route', async () => {
    const g = await withMetrics({ MEDIAGATE_ROLE: 'worker' });
    expect((await g.app.inject({ method: 'POST', url: '/v1/pic/images', headers: g.auth(), payload: { model: 'pic', prompt: 'x' } })).statusCode).toBe(404);
    const s = await scrape(g, TOKEN);
    expect(sampleSum(s, 'mediagate_http_requests_total', { route: 'unmatched', status: '404' })).toBe(1);
  });
});

describe('/metrics counts', () => {
  it('a pic submit, its run, its completion and chat calls move their metrics; no task id in any label', async () => {
    const g = await withMetrics();
    const id = await submitPic(g, 'pic', 'a lighthouse');
    await g.waitForTask(id, ['completed']);
    const poll = await g.app.inject({ method: 'GET', url: `/v1/result/${id}`, headers: g.auth() });
    expect(poll.statusCode).toBe(200);
    const messages = [{ role: 'user', content: 'Hello there' }];
    const whole = await g.app.inject({ method: 'POST', url: '/v1/chat/completions', headers: g.auth(), payload: { model: 'chat-2.5-flash', messages } });
    expect(whole.statusCode, whole.body).toBe(200);
    const streamed = await g.app.inject({
      method: 'POST',
      url: '/v1/chat/completions',
      headers: g.auth(),
      payload: { model: 'chat-2.5-flash', messages, stream: true },
    });
    expect(streamed.statusCode).toBe(200);
    expect(streamed.body).toContain('[DONE]');

    const res = await g.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.body).not.toContain(id);
    const s = await scrape(g, TOKEN);
    expect(sampleSum(s, 'mediagate_http_requests_total', { route: '/v1/pic/images', method: 'POST', status: '200' })).toBe(1);
    expect(sampleSum(s, 'mediagate_http_requests_total', { route: '/v1/result/:id', method: 'GET', status: '200' })).toBe(1);
    expect(countOf(s, 'mediagate_http_request_duration_seconds', { route: '/v1/chat/completions', status: '200' })).toBe(2);
    // the routes are patterns: the polled id is in none
    expect(labelValues(s, 'mediagate_http_requests_total', 'route').every((r) => !r.includes('task_'))).toBe(true);
    expect(countOf(s, 'mediagate_task_duration_seconds', { family: 'pic', model: 'pic', state: 'completed' })).toBe(1);
    expect(sampleSum(s, 'mediagate_upstream_calls_total', { channel: 'sandbox', outcome: 'ok' })).toBeGreaterThanOrEqual(1);
    expect(countOf(s, 'mediagate_upstream_call_duration_seconds', { channel: 'sandbox', outcome: 'ok' })).toBeGreaterThanOrEqual(1);
    expect(sampleSum(s, 'mediagate_circuit_state', { channel: 'sandbox', state: 'closed' })).toBe(1);
    expect(sampleSum(s, 'mediagate_circuit_state', { channel: 'sandbox', state: 'open' })).toBe(0);
    const usage = (whole.json() as { data: { usage: { prompt_tokens: number; completion_tokens: number } } }).data.usage;
    expect(sampleSum(s, 'mediagate_chat_tokens_total', { model: 'chat-2.5-flash', kind: 'prompt' })).toBe(2 * usage.prompt_tokens);
    expect(sampleSum(s, 'mediagate_chat_tokens_total', { model: 'chat-2.5-flash', kind: 'completion' })).toBe(2 * usage.completion_tokens);
    expect(countOf(s, 'mediagate_chat_time_to_first_token_seconds', { model: 'chat-2.5-flash' })).toBe(1); // the streamed one only
    // the pic's price (1 credit) was held at submit and captured at completion; the chat models are free
    expect(sampleSum(s, 'mediagate_credits_captured')).toBe(1);
    expect(sampleSum(s, 'mediagate_credits_held')).toBe(0);
    expect(sampleSum(s, 'mediagate_queue_depth')).toBe(0);
    expect(sampleSum(s, 'mediagate_queue_oldest_age_seconds')).toBe(0);
  });

  it('tasks and the queue come from the store; a model outside the known set is reported as other', async () => {
    const g = await withMetrics({ MEDIAGATE_WORKERS: '0' });
    const id = await submitPic(g, 'pic-2', 'waits in the queue');
    const before = (await g.store.tasks.get(id))!.createdAt;
    await insertTask(g.store.tasks, {
      id: 'task_unknown_model',
      ownerKeyId: (await g.store.tasks.get(id))!.ownerKeyId,
      family: 'pic',
      form: null,
      model: 'someone-elses-model',
      provider: 'sandbox',
      request: { params: { prompt: 'x' }, output: { kind: 'image', width: 8, height: 8, format: 'png' }, media: {} } as never,
      amount: 0,
      createdAt: before + 1,
    });
    const s = await scrape(g, TOKEN);
    expect(sampleSum(s, 'mediagate_tasks', { family: 'pic', model: 'pic-2', state: 'queued' })).toBe(1);
    expect(sampleSum(s, 'mediagate_tasks', { family: 'pic', model: 'other', state: 'queued' })).toBe(1);
    expect(labelValues(s, 'mediagate_tasks', 'model')).toEqual(['other', 'pic-2']);
    expect(sampleSum(s, 'mediagate_queue_depth')).toBe(2);
    expect(sampleSum(s, 'mediagate_queue_oldest_age_seconds')).toBeGreaterThanOrEqual(0);
    expect(sampleSum(s, 'mediagate_credits_held')).toBe(2); // pic-2's price, held until it ends
  });

  it('labels requests by key only for the keys of MEDIAGATE_METRICS_KEYS; the others share an empty key label', async () => {
    const g = await withMetrics({ MEDIAGATE_METRICS_KEYS: WATCHED.id });
    const now = Date.now();
    await g.store.keys.insert(
      {
        id: WATCHED.id,
        name: 'watched',
        accountId: 'acct_watched',
        prefix: WATCHED.secret.slice(0, 8),
        createdAt: now,
        revokedAt: null,
        hash: hashApiKey(WATCHED.secret),
      },
      { id: 'acct_watched', name: 'watched', createdAt: now, startingMicro: 0 },
    );
    for (const key of [WATCHED.secret, g.key, g.otherKey]) {
      const balance = await g.app.inject({ method: 'GET', url: '/v1/account', headers: g.auth(key) });
      expect(balance.statusCode).toBe(200);
      // the poll path knows only the key's hash (G222): learned from the request before
      const res = await g.app.inject({ method: 'GET', url: '/v1/result/task_missing', headers: g.auth(key) });
      expect(res.statusCode).toBe(404);
    }
    const s = await scrape(g, TOKEN);
    expect(labelValues(s, 'mediagate_http_requests_total', 'key')).toEqual(['', WATCHED.id]);
    expect(sampleSum(s, 'mediagate_http_requests_total', { route: '/v1/result/:id', status: '404', key: WATCHED.id })).toBe(1);
    expect(sampleSum(s, 'mediagate_http_requests_total', { route: '/v1/result/:id', status: '404', key: '' })).toBe(2);
    expect(sampleSum(s, 'mediagate_http_requests_total', { route: '/v1/account', key: WATCHED.id })).toBe(1);
  });
});

describe('task durations observe every terminal transition', () => {
  it('a task failed by the queue TTL (the retention sweeper) is in mediagate_task_duration_seconds', async () => {
    const store = openMemoryStore();
    const request = { params: { prompt: 'x' }, output: { kind: 'image' as const, width: 8, height: 8, format: 'png' as const }, media: mediaRefs() };
    await insertTask(store.tasks, {
      id: 'task_ttl_metric',
      ownerKeyId: 'key_ttl',
      family: 'pic',
      form: null,
      model: 'pic',
      provider: 'sandbox',
      request,
      amount: 1,
      createdAt: Date.now() - 3 * 3_600_000,
    });
    const gateway = await createGateway(
      loadConfig({
        MEDIAGATE_DATA_DIR: tempDir(),
        MEDIAGATE_LOG_LEVEL: 'silent',
        MEDIAGATE_WORKERS: '0',
        MEDIAGATE_MIN_FREE_DISK_MB: '0',
        MEDIAGATE_QUEUE_TTL_HOURS: '2',
        MEDIAGATE_METRICS_TOKEN: TOKEN,
      }),
      { store },
    );
    try {
      gateway.startBackground();
      await waitFor(async () => ((await store.tasks.get('task_ttl_metric'))?.status === 'failed' ? true : undefined), 10_000, 'the queue TTL sweep');
      const s = await scrape(gateway, TOKEN);
      expect(countOf(s, 'mediagate_task_duration_seconds', { family: 'pic', model: 'pic', state: 'failed' })).toBe(1);
    } finally {
      await gateway.close(0);
    }
  });
});
