/**
 * `mediagate serve` with MEDIAGATE_OTEL=on (G227): the SDK is loaded, spans reach an OTLP/HTTP
 * collector at OTEL_EXPORTER_OTLP_ENDPOINT (here a local receiver), flushed at shutdown, under the
 * service name OTEL_SERVICE_NAME.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { startServer } from '../../../src/main/serve.js';
import { tempDir } from '../../helpers/temp-root.js';

const KEY = 'otlp-e2e-key-0123456789abcdef';
const received: Array<{ path: string; body: string }> = [];
const collector = http.createServer((req, res) => {
  const parts: Buffer[] = [];
  req.on('data', (c: Buffer) => parts.push(c));
  req.on('end', () => {
    received.push({ path: req.url ?? '', body: Buffer.concat(parts).toString('utf8') });
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
});
const dataDir = tempDir();

afterAll(async () => {
  await new Promise<void>((resolve) => collector.close(() => resolve()));
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('tracing through OTLP/HTTP', () => {
  it('a request span reaches the collector by the time the server has stopped', async () => {
    await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
    const { port } = collector.address() as AddressInfo;
    const server = await startServer({
      PORT: '0',
      HOST: '127.0.0.1',
      MEDIAGATE_DATA_DIR: dataDir,
      MEDIAGATE_LOG_LEVEL: 'silent',
      MEDIAGATE_MIN_FREE_DISK_MB: '0',
      MEDIAGATE_BOOTSTRAP_KEY: KEY,
      MEDIAGATE_SANDBOX_TIMING: 'instant',
      MEDIAGATE_OTEL: 'on',
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
      OTEL_SERVICE_NAME: 'mediagate-otlp-test',
    });
    const res = await fetch(`${server.url}/v1/result/task_missing`, { headers: { authorization: `Bearer ${KEY}` } });
    expect(res.status).toBe(404);
    await server.close();
    const traces = received.filter((r) => r.path === '/v1/traces');
    expect(traces.length).toBeGreaterThan(0);
    const body = traces.map((t) => t.body).join('\n');
    expect(body).toContain('GET /v1/result/:id');
    expect(body).toContain('mediagate-otlp-test');
    expect(body).not.toContain(KEY);
  });
});
