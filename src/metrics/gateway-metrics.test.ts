import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { describe, expect, it } from 'vitest';
import type { LiveTaskCount } from '../store/types.js';
import { GatewayMetrics } from './gateway-metrics.js';

const parse = async (m: GatewayMetrics) => parsePrometheusTextFormat(await m.text());
const samples = async (m: GatewayMetrics, name: string) => (await parse(m)).find((f) => f.name === name)?.metrics ?? [];

describe('GatewayMetrics', () => {
  it('reports models outside the known set as other, in every metric with a model label', async () => {
    const m = new GatewayMetrics({ models: ['pic', 'chat-2.5-flash'], processMetrics: false });
    expect(m.model('pic')).toBe('pic');
    expect(m.model('a-caller-typed-this')).toBe('other');
    m.chatUsage('chat-2.5-flash', 10, 5);
    m.chatUsage('unknown-1', 1, 1);
    m.chatUsage('unknown-2', 2, 2);
    m.taskFinished({ family: 'pic', model: 'mystery', status: 'failed', createdAt: 1000, finishedAt: 3000 });
    const tokens = await samples(m, 'mediagate_chat_tokens_total');
    expect(tokens.map((s) => [s.labels, s.value])).toEqual([
      [{ model: 'chat-2.5-flash', kind: 'prompt' }, '10'],
      [{ model: 'chat-2.5-flash', kind: 'completion' }, '5'],
      [{ model: 'other', kind: 'prompt' }, '3'],
      [{ model: 'other', kind: 'completion' }, '3'],
    ]);
    expect(await m.text()).toContain('mediagate_task_duration_seconds_sum{family="pic",model="other",state="failed"} 2');
  });

  it('exports webhookDelivery for the webhook sender, counted by outcome', async () => {
    const m = new GatewayMetrics({ models: [], processMetrics: false });
    m.webhookDelivery('delivered');
    m.webhookDelivery('failed');
    m.webhookDelivery('delivered');
    expect((await samples(m, 'mediagate_webhook_deliveries_total')).map((s) => [s.labels?.outcome, s.value])).toEqual([
      ['delivered', '2'],
      ['failed', '1'],
    ]);
  });

  it('reads the store once per cache period, whatever the number of gauges and scrapes; a failed read keeps the last numbers and is retried', async () => {
    let t = 0;
    let reads = 0;
    let fail = false;
    let live: LiveTaskCount[] = [{ family: 'pic', model: 'pic', status: 'queued', count: 3, oldestCreatedAt: 0 }];
    const m = new GatewayMetrics({ models: ['pic'], processMetrics: false });
    m.watchStore(
      {
        liveCounts: async () => {
          reads++;
          if (fail) throw new Error('store down');
          return live;
        },
        creditTotals: async () => ({ heldMicro: 2_500_000, capturedMicro: 7_000_000 }),
      },
      5000,
      () => t,
    );
    t = 10_000;
    let text = await m.text();
    expect(reads).toBe(1);
    expect(text).toContain('mediagate_store_up 1');
    expect(text).toContain('mediagate_tasks{family="pic",model="pic",state="queued"} 3');
    expect(text).toContain('mediagate_queue_oldest_age_seconds 10');
    expect(text).toContain('mediagate_credits_held 2.5');
    expect(text).toContain('mediagate_credits_captured 7');
    live = [];
    t = 14_999;
    text = await m.text();
    expect(reads).toBe(1); // cached: the same numbers
    expect(text).toContain('mediagate_queue_depth 3');
    t = 15_000;
    text = await m.text();
    expect(reads).toBe(2);
    expect(text).toContain('mediagate_queue_depth 0');
    expect(text).toContain('mediagate_queue_oldest_age_seconds 0');
    fail = true;
    t = 20_000;
    text = await m.text();
    expect(text).toContain('mediagate_store_up 0');
    expect(text).toContain('mediagate_credits_captured 7'); // the last good read's
    expect(reads).toBe(3);
    fail = false;
    live = [{ family: 'pic', model: 'pic', status: 'processing', count: 1, oldestCreatedAt: 0 }];
    text = await m.text(); // tried again at once
    expect(reads).toBe(4);
    expect(text).toContain('mediagate_store_up 1');
    expect(text).toContain('mediagate_tasks{family="pic",model="pic",state="processing"} 1');
    expect(text).not.toContain('state="queued"');
  });

  it('reports each circuit as one state at 1 and the others at 0; adds a key label only when keys are listed', async () => {
    const m = new GatewayMetrics({ models: [], keys: new Set(['key_a']), processMetrics: false });
    m.watchCircuits(() => [
      ['oai', 'open'],
      ['sandbox', 'closed'],
    ]);
    m.httpRequest('/v1/result/:id', 'GET', 200, 'key_a', 0.01);
    m.httpRequest('/v1/result/:id', 'GET', 200, 'key_b', 0.01);
    const circuits = await samples(m, 'mediagate_circuit_state');
    expect(circuits.filter((s) => s.value === '1').map((s) => s.labels)).toEqual([
      { channel: 'oai', state: 'open' },
      { channel: 'sandbox', state: 'closed' },
    ]);
    expect(circuits).toHaveLength(6);
    expect((await samples(m, 'mediagate_http_requests_total')).map((s) => s.labels?.key)).toEqual(['key_a', '']);
    const plain = new GatewayMetrics({ models: [], processMetrics: false });
    plain.httpRequest('/v1/result/:id', 'GET', 200, 'key_a', 0.01);
    expect((await samples(plain, 'mediagate_http_requests_total'))[0]!.labels).toEqual({ route: '/v1/result/:id', method: 'GET', status: '200' });
  });
});
