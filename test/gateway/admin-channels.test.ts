/**
 * `/admin/v1/channels` through HTTP (G322, G323, G325): two gateways on one store (a SQLite file
 * opened twice, or one PostgreSQL database): a circuit opened by the one that runs tasks is seen,
 * with the faults and the scrubbed last error, from the other; probes against the fakes of the real
 * protocols (a list or status call with the configured key) pass, a refused key fails naming the
 * status, every probe is audited; unknown ids 404; caller keys 403.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createComfyUiProvider } from '../../src/providers/comfyui/index.js';
import { createFalProvider } from '../../src/providers/fal/index.js';
import { createGeminiProvider } from '../../src/providers/gemini/index.js';
import { createOpenAiImagesProvider } from '../../src/providers/openai-images/index.js';
import { createOpenAiChatProvider } from '../../src/providers/openai/chat.js';
import { chatOnlyProvider } from '../../src/providers/registry.js';
import { createRelayProvider } from '../../src/providers/relay/index.js';
import { createReplicateProvider } from '../../src/providers/replicate/index.js';
import { createSandboxProvider } from '../../src/providers/sandbox/index.js';
import { ChannelError, type Provider } from '../../src/providers/types.js';
import { openPostgresStore } from '../../src/store/postgres/index.js';
import { openSqliteStore } from '../../src/store/sqlite/open.js';
import type { Store } from '../../src/store/types.js';
import { startFakeComfyUi, type FakeComfyUi } from '../fakes/comfyui.js';
import { startFakeFal, type FakeFal } from '../fakes/fal.js';
import { startFakeGemini, type FakeGemini } from '../fakes/gemini.js';
import { startFakeOpenAiImages, type FakeOpenAiImages } from '../fakes/openai-images.js';
import { startFakeReplicate, type FakeReplicate } from '../fakes/replicate.js';
import { adminOptions, withAdmin, type AdminHarness } from '../helpers/admin.js';
import { createHarness } from '../helpers/harness.js';
import { tempDir } from '../helpers/temp-root.js';
import { waitFor } from '../helpers/wait-for.js';
import { startFakeOpenAi, type FakeOpenAi } from '../helpers/fake-openai.js';
import { listeningGateway, type ListeningGateway } from '../helpers/listening-gateway.js';
import { harnessOnPostgres, postgresDatabase } from '../helpers/postgres.js';

const database = harnessOnPostgres ? postgresDatabase() : undefined;

/** `down` refuses every call the way a dead upstream does, with a secret in its words. */
const down: Provider = {
  id: 'down',
  capabilities: { families: ['pic'] },
  start: async () => {
    throw new ChannelError('the upstream down refused the connection (key=sk-live-0123456789abcdef)');
  },
};

let oai: FakeOpenAiImages;
let rep: FakeReplicate;
let gem: FakeGemini;
let fal: FakeFal;
let comfy: FakeComfyUi;
let chat: FakeOpenAi;
/** A gateway on a port: the upstream of the relay channel (the interface's own status call). */
let upstream: ListeningGateway;
let runner: AdminHarness;
let reader: AdminHarness;
beforeAll(async () => {
  oai = await startFakeOpenAiImages();
  rep = await startFakeReplicate();
  gem = await startFakeGemini();
  fal = await startFakeFal();
  comfy = await startFakeComfyUi({ token: 'comfy-token-0123' });
  upstream = await listeningGateway({ workers: false });
  chat = await startFakeOpenAi();
  let open: () => Promise<Store>;
  if (database) {
    const url = await database.empty();
    open = () => openPostgresStore({ url, poolSize: 4 });
  } else {
    const file = path.join(tempDir(), 'mediagate.db');
    open = async () => openSqliteStore(file);
  }
  const providers = (): Provider[] => [
    down,
    createSandboxProvider({ timing: 'instant' }),
    createOpenAiImagesProvider({ id: 'oai', baseUrl: oai.baseUrl, apiKey: oai.apiKey }),
    createOpenAiImagesProvider({ id: 'oai-bad-key', baseUrl: oai.baseUrl, apiKey: 'sk-wrong-0000' }),
    createReplicateProvider({ id: 'rep', baseUrl: rep.baseUrl, apiKey: rep.apiKey, models: {} as never }),
    createGeminiProvider({ id: 'gem', baseUrl: gem.baseUrl, apiKey: gem.apiKey }),
    createFalProvider({ id: 'fal', baseUrl: fal.baseUrl, apiKey: fal.apiKey, models: {} as never }),
    createFalProvider({ id: 'fal-bad-key', baseUrl: fal.baseUrl, apiKey: 'nobody:nothing', models: {} as never }),
    createComfyUiProvider({ id: 'comfy', baseUrl: comfy.baseUrl, apiKey: 'comfy-token-0123' }),
    createRelayProvider({ id: 'relay', baseUrl: upstream.origin, apiKey: upstream.key }),
    chatOnlyProvider(createOpenAiChatProvider({ id: 'chat', baseUrl: chat.baseUrl, apiKey: 'sk-chat-0123', timeoutMs: 10_000, connectTimeoutMs: 2_000 })),
    createRelayProvider({ id: 'relay-bad-key', baseUrl: upstream.origin, apiKey: 'mg_not_a_key_0123456789' }),
  ];
  const routes = {
    'pic-2': [
      { provider: 'down', priority: 0, weight: 1 },
      { provider: 'oai', priority: 1, weight: 2 },
    ],
  };
  const breaker = { failuresToOpen: 1, openMs: 600_000, maxOpenMs: 600_000 };
  runner = withAdmin(await createHarness(adminOptions({ workers: true, store: await open(), providers: providers(), routes, breaker })));
  reader = withAdmin(await createHarness(adminOptions({ workers: false, store: await open(), providers: providers(), routes, breaker })));
});
afterAll(async () => {
  await reader?.close();
  await runner?.close();
  await oai?.close();
  await rep?.close();
  await gem?.close();
  await fal?.close();
  await comfy?.close();
  await upstream?.close();
  await chat?.close();
});

type Channel = Record<string, any>;
const channel = async (h: AdminHarness, id: string): Promise<Channel> => {
  const res = await h.admin('GET', '/admin/v1/channels');
  expect(res.status, JSON.stringify(res.json)).toBe(200);
  return (res.json.data as Channel[]).find((c) => c.id === id)!;
};

describe('channels', () => {
  it('a circuit opened by one gateway is seen from another, with its faults and its last error scrubbed', async () => {
    const before = await channel(reader, 'down');
    expect(before).toMatchObject({ id: 'down', object: 'channel', circuit: { state: 'closed', since: null }, in_flight: 0, last_error: null });
    expect(before.routes).toEqual([{ model: 'pic-2', upstream_model: null, priority: 0, weight: 1 }]);
    expect((await channel(reader, 'oai')).routes).toEqual([{ model: 'pic-2', upstream_model: null, priority: 1, weight: 2 }]);

    const res = await runner.app.inject({ method: 'POST', url: '/v1/pic/images', headers: runner.auth(), payload: { model: 'pic-2', prompt: 'a lighthouse' } });
    expect(res.statusCode, res.body).toBe(200);
    const seen = await waitFor(
      async () => {
        const c = await channel(reader, 'down');
        return c.circuit.state === 'open' && c.last_5m.faults >= 1 ? c : undefined;
      },
      15_000,
      'the open circuit and its fault, seen from the other gateway',
    );
    expect(seen.circuit.since).toEqual(expect.any(Number));
    expect(seen.last_hour.faults).toBeGreaterThanOrEqual(seen.last_5m.faults);
    expect(seen.last_5m.latency_ms).toEqual(expect.any(Number));
    expect(seen.last_error.message).toMatch(/refused the connection/);
    expect(seen.last_error.message).not.toMatch(/sk-live/);
  });

  it('probes with a list or status call of each API; a refused key fails naming the status; each probe is audited', async () => {
    const generations = [oai.requests.length, rep.creates.length];
    const ok = await reader.admin('POST', '/admin/v1/channels/oai/probe');
    expect(ok.json).toMatchObject({ object: 'channel_probe', channel: 'oai', ok: true, call: 'GET /models', status: 200, error: null });
    expect(oai.requests).toHaveLength(generations[0]!); // no generation
    expect((await reader.admin('POST', '/admin/v1/channels/rep/probe')).json).toMatchObject({ ok: true, call: 'GET /account', status: 200 });
    expect(rep.creates).toHaveLength(generations[1]!);
    expect((await reader.admin('POST', '/admin/v1/channels/sandbox/probe')).json).toMatchObject({ ok: true, status: null });
    const bad = await reader.admin('POST', '/admin/v1/channels/oai-bad-key/probe');
    expect(bad.json).toMatchObject({ ok: false, call: 'GET /models', status: 401 });
    expect(bad.json.error).toMatch(/401.*refused/);
    expect((await reader.admin('POST', '/admin/v1/channels/down/probe')).json).toMatchObject({ ok: false, call: null, error: 'provider down has no probe' });
    expect((await reader.admin('POST', '/admin/v1/channels/gem/probe')).json).toMatchObject({ ok: true, call: 'GET /models', status: 200 });
    expect(gem.creates()).toBe(0);
    expect((await reader.admin('POST', '/admin/v1/channels/fal/probe')).json).toMatchObject({
      ok: true,
      call: 'GET /fal-ai/fast-sdxl/requests/{id}/status',
      status: 404,
    });
    expect(fal.submits).toHaveLength(0);
    expect((await reader.admin('POST', '/admin/v1/channels/fal-bad-key/probe')).json).toMatchObject({ ok: false, status: 401 });
    expect((await reader.admin('POST', '/admin/v1/channels/comfy/probe')).json).toMatchObject({ ok: true, call: 'GET /queue', status: 200 });
    expect(comfy.prompts).toHaveLength(0);
    expect((await reader.admin('POST', '/admin/v1/channels/relay/probe')).json).toMatchObject({ ok: true, call: 'GET /v1/account', status: 200 });
    expect((await reader.admin('POST', '/admin/v1/channels/chat/probe')).json).toMatchObject({ ok: true, call: 'GET /models', status: 200 });
    expect(chat.requests.map((r) => `${r.method} ${r.url}`)).toEqual(['GET /v1/models']); // no completion
    expect((await reader.admin('POST', '/admin/v1/channels/relay-bad-key/probe')).json).toMatchObject({ ok: false, call: 'GET /v1/account', status: 401 });
    const audit = (await reader.admin('GET', '/admin/v1/audit?action=channel.probe')).json.data as Array<Record<string, any>>;
    expect(audit.map((e) => [e.target, e.details.ok])).toEqual(
      expect.arrayContaining([
        ['oai', true],
        ['rep', true],
        ['oai-bad-key', false],
      ]),
    );
  });

  it('unknown ids are 404 channel_not_found; caller keys get 403 admin_only', async () => {
    const res = await reader.admin('POST', '/admin/v1/channels/nope/probe');
    expect([res.status, res.json.error.code]).toEqual([404, 'channel_not_found']);
    for (const [method, url] of [
      ['GET', '/admin/v1/channels'],
      ['POST', '/admin/v1/channels/oai/probe'],
    ] as const) {
      expect((await reader.admin(method, url, undefined, reader.key)).json.error.code, url).toBe('admin_only');
    }
  });
});
