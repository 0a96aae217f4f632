/**
 * Start light (G295-G299, G420): a gateway loads only what its configuration uses; an operator command only what it needs. A spawned process
 * starts the built gateway and reports the packages loaded on its main thread (loaded-packages.ts).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { encode } from 'gpt-tokenizer';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadedPackages } from '../helpers/loaded-packages.js';
import { ensureBuilt } from '../helpers/process.js';

/** What the default configuration must not load: each comes with a setting (or on first use). */
const OPTIONAL = ['@aws-sdk/client-s3', '@aws-sdk/lib-storage', '@aws-sdk/s3-request-presigner', 'pg', 'ioredis', 'gpt-tokenizer', 'sharp', 'prom-client'];
const isOtel = (p: string): boolean => p.startsWith('@opentelemetry/');

/** An upstream adapter's own code (its factory, defaults and option schemas are read with the configuration, the shared toolkit serves chat too; G422). */
const adapterCode = (m: string): boolean =>
  /^providers\/(?!sandbox\/|openai\/|toolkit\/|callbacks\/)[^/]+\/(?!factory\.js$|defaults\.js$|models\.js$|templates\.js$|builtin-templates\.js$)/.test(m);

const dataDir = (): string => fs.mkdtempSync(path.join(os.tmpdir(), 'mediagate-start-light-'));
/** A port nothing listens on (the discard port): a store or Redis there fails at once. */
const CLOSED = '127.0.0.1:9';

beforeAll(() => ensureBuilt(), 180_000);

describe('start light (G295-G299)', () => {
  it('the default configuration loads none of the optional packages; a chat reply counts its tokens off the main thread, exactly', async () => {
    const key = `sk-start-light-${'k'.repeat(24)}`;
    const question = 'Why is the sky blue? 天空为什么是蓝色的 🤖';
    const { packages, modules, error, result } = await loadedPackages(
      { MEDIAGATE_DATA_DIR: dataDir(), MEDIAGATE_BOOTSTRAP_KEY: key },
      `
      const res = await fetch(url + '/v1/chat/completions', {
        method: 'POST',
        headers: { authorization: 'Bearer ' + key, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'chat-2.5-flash', messages: [{ role: 'user', content: ${JSON.stringify(question)} }] }),
      });
      return { status: res.status, body: await res.json() };
    `,
    );
    expect(error).toBeUndefined();
    expect(packages).toContain('fastify'); // the probe sees what the gateway loads
    expect(packages.filter((p) => OPTIONAL.includes(p) || isOtel(p))).toEqual([]);
    // TypeBox from the build's one file, no file of the package (G484)
    expect(packages).not.toContain('@sinclair/typebox');
    expect(modules).toContain('typebox.js');
    // the sandbox serves everything: no other adapter's code is loaded (G422)
    expect(modules).toContain('providers/sandbox/index.js');
    expect(modules.filter(adapterCode)).toEqual([]);
    const { status, body } = result as { status: number; body: { data: { content: string; usage: { prompt_tokens: number; completion_tokens: number } } } };
    expect(status, JSON.stringify(body)).toBe(200);
    // the tokenizer thread counts what gpt-tokenizer counts (G37: priming 3, per message 3, role, text)
    expect(body.data.usage.prompt_tokens).toBe(3 + 3 + encode('user').length + encode(question).length);
    expect(body.data.usage.completion_tokens).toBe(encode(body.data.content).length);
  }, 60_000);

  it('tracing, metrics, a bucket and Redis load their packages when set (and nothing else optional)', async () => {
    const { packages, error } = await loadedPackages({
      MEDIAGATE_DATA_DIR: dataDir(),
      MEDIAGATE_OTEL: 'on',
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://${CLOSED}`,
      MEDIAGATE_METRICS_TOKEN: 'metrics-token-of-the-start-light-test',
      MEDIAGATE_S3_BUCKET: 'start-light',
      MEDIAGATE_S3_ENDPOINT: `http://${CLOSED}`,
      MEDIAGATE_REDIS_URL: `redis://${CLOSED}`,
    });
    expect(error).toMatch(/Redis/); // the last of them: nothing answers there
    expect(packages).toEqual(
      expect.arrayContaining([
        '@opentelemetry/api',
        '@opentelemetry/sdk-trace-node',
        '@opentelemetry/exporter-trace-otlp-http',
        'prom-client',
        '@aws-sdk/client-s3',
        'ioredis',
      ]),
    );
    expect(packages.filter((p) => ['pg', 'gpt-tokenizer', 'sharp'].includes(p))).toEqual([]);
  }, 60_000);

  it('an operator command loads no provider adapter, no chat upstream and no usage text (G420)', async () => {
    const { modules, error } = await loadedPackages({ MEDIAGATE_DATA_DIR: dataDir() }, '', ['keys', 'list']);
    expect(error).toBeUndefined();
    expect(modules).toContain('main/keys-cli.js'); // the probe sees what the command loads
    expect(modules).toContain('store/sqlite/open.js');
    // the adapters (a folder each, their toolkit), their list, providers.json's and the chat upstreams' readers, the usage text's modules
    const upstreams = (m: string): boolean => /^providers\/.+\//.test(m) || ['providers/factories.js', 'providers/providers-file.js'].includes(m);
    expect(modules.filter((m) => upstreams(m) || m.startsWith('chat/') || m === 'config.js' || m === 'main/client-commands.js')).toEqual([]);
  }, 60_000);

  it('providers.json loads the adapters of the types it names, and no other (G422)', async () => {
    const dir = dataDir();
    const file = path.join(dir, 'providers.json');
    fs.writeFileSync(file, JSON.stringify({ providers: { up: { type: 'relay', baseUrl: `http://${CLOSED}` } }, routes: { 'pic-2': [{ provider: 'up' }] } }));
    const { modules, error } = await loadedPackages({ MEDIAGATE_DATA_DIR: dir, MEDIAGATE_PROVIDERS: file });
    expect(error).toBeUndefined();
    expect(modules).toContain('providers/relay/provider.js');
    expect(modules.filter(adapterCode).filter((m) => !m.startsWith('providers/relay/'))).toEqual([]);
  }, 60_000);

  it('a PostgreSQL URL loads pg', async () => {
    const { packages, error } = await loadedPackages({ MEDIAGATE_DATA_DIR: dataDir(), MEDIAGATE_DATABASE_URL: `postgres://postgres@${CLOSED}/start_light` });
    expect(error).toBeDefined(); // nothing answers there
    expect(packages).toContain('pg');
    expect(packages.filter((p) => ['@aws-sdk/client-s3', 'ioredis', 'gpt-tokenizer', 'sharp', 'prom-client'].includes(p) || isOtel(p))).toEqual([]);
  }, 60_000);
});
