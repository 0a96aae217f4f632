/**
 * A relay in front of a hostile upstream (issue 23; G270-G274): a fake upstream speaking the
 * interface, scripted per task by its prompt.
 *
 * - a result URL on the upstream's own origin that redirects to another private address: the
 *   gateway never fetches it, the task fails at once naming no address, with one generation;
 * - an unknown status, a malformed reply, a 400 to one task's status query: checked again on the
 *   same generation, then the task fails saying what the upstream answered; a reply garbled for a
 *   while and then right completes; none of it opens the channel's circuit;
 * - a permanently dead upstream: the waiting task says `queue_reason: "upstream_unavailable"`,
 *   fails after MEDIAGATE_UNAVAILABLE_FAIL_SECONDS, its credit hold released.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashApiKey } from '../../src/auth/keys.js';
import { createRelayProvider } from '../../src/providers/relay/index.js';
import { MAX_REPLY_PROBLEMS, type Provider } from '../../src/providers/types.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { waitFor } from '../helpers/wait-for.js';
import { freePort } from '../helpers/listening-gateway.js';
import { body } from '../helpers/json.js';
import { image } from '../helpers/media-fixtures.js';

type Reply = { status: number; body: string; headers?: Record<string, string> };
/** What the fake upstream answers to the nth check (0-based) of a task with this prompt. */
type Script = (check: number, id: string) => Reply;

const json = (value: unknown, status = 200): Reply => ({ status, body: typeof value === 'string' ? value : JSON.stringify(value) });

interface FakeUpstream {
  origin: string;
  /** Creates received, by prompt. */
  creates: Map<string, number>;
  /** Requests the private address behind the redirect received. */
  privateHits: number;
  script(prompt: string, s: Script): void;
  close(): Promise<void>;
}

async function listen(server: http.Server, host: string): Promise<string> {
  await new Promise<void>((r) => server.listen(0, host, r));
  return `http://${host}:${(server.address() as AddressInfo).port}`;
}

async function startFakeUpstream(png: Buffer): Promise<FakeUpstream> {
  const scripts = new Map<string, Script>();
  const tasks = new Map<string, { prompt: string; checks: number }>();
  const creates = new Map<string, number>();
  let privateHits = 0;
  // "another private address": a second loopback address the upstream's result URL redirects to
  const hidden = http.createServer((_req, res) => {
    privateHits++;
    res.writeHead(200, { 'content-type': 'image/png' }).end(png);
  });
  const hiddenOrigin = await listen(hidden, '127.0.0.2');
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => {
      raw += c.toString('utf8');
    });
    req.on('end', () => {
      const send = (r: Reply) => res.writeHead(r.status, { 'content-type': 'application/json', ...r.headers }).end(r.body);
      const path = req.url ?? '';
      if (req.method === 'POST' && path === '/v1/pic/images') {
        const prompt = (JSON.parse(raw) as { prompt: string }).prompt;
        creates.set(prompt, (creates.get(prompt) ?? 0) + 1);
        const id = `up_${tasks.size + 1}`;
        tasks.set(id, { prompt, checks: 0 });
        send(json({ id, object: 'image', status: 'queued', progress: 0 }));
        return;
      }
      const check = /^\/v1\/result\/([^/?]+)$/.exec(path);
      const task = check ? tasks.get(check[1]!) : undefined;
      if (req.method === 'GET' && task) {
        const script = scripts.get(task.prompt)!;
        send(script(task.checks++, check![1]!));
        return;
      }
      if (req.method === 'GET' && path.startsWith('/files/own/')) {
        res.writeHead(200, { 'content-type': 'image/png' }).end(png);
        return;
      }
      if (req.method === 'GET' && path.startsWith('/files/elsewhere/')) {
        res.writeHead(302, { location: `${hiddenOrigin}/secret.png` }).end();
        return;
      }
      send(json({ error: { message: 'no such path' } }, 404));
    });
  });
  const origin = await listen(server, '127.0.0.1');
  return {
    origin,
    creates,
    get privateHits() {
      return privateHits;
    },
    script: (prompt, s) => {
      scripts.set(prompt, s);
    },
    close: async () => {
      for (const s of [server, hidden]) {
        s.closeAllConnections();
        await new Promise<void>((r) => s.close(() => r()));
      }
    },
  };
}

const completedAt =
  (origin: string, file: string) =>
  (_n: number, id: string): Reply =>
    json({ id, object: 'image.generation', status: 'completed', progress: 100, image_url: `${origin}/files/${file}`, error: null });
const queued = (id: string): Reply => json({ id, object: 'image.generation', status: 'queued', progress: 10, image_url: null, error: null });

describe('a relay against a hostile upstream', () => {
  let up: FakeUpstream;
  let relay: Provider;
  let h: Harness;

  beforeAll(async () => {
    up = await startFakeUpstream(await image(64, 64));
    relay = createRelayProvider({ id: 'up', baseUrl: up.origin, pollSeconds: 0.05 });
    h = await createHarness({
      // the public-address rule in force: only the upstream's own origin may be private (G270)
      env: { MEDIAGATE_ALLOW_PRIVATE_URLS: '0' },
      providers: [relay],
      routes: { '*': [{ provider: 'up', priority: 0, weight: 1 }] },
      breaker: { failuresToOpen: 2, openMs: 60_000, maxOpenMs: 60_000 },
    });
  }, 60_000);
  afterAll(async () => {
    await h?.close();
    await up?.close();
  });

  const submit = async (prompt: string): Promise<string> => {
    const res = await h.app.inject({ method: 'POST', url: '/v1/pic/images', headers: h.auth(), payload: { model: 'pic', prompt } });
    expect(res.statusCode, res.body).toBe(200);
    return body(res).id as string;
  };
  const circuitClosed = () => expect(h.gateway.channels.state('up')).toBe('closed');

  it("a result on the upstream's own (private) origin is fetched and completes the task", async () => {
    up.script('own origin', completedAt(up.origin, 'own/result.png'));
    const task = await h.waitForTask(await submit('own origin'));
    expect(task.status, task.error ?? '').toBe('completed');
  });

  it('a result URL on its own origin that redirects to another private address fails the task at once, fetching nothing there (G270, G271)', async () => {
    up.script('redirected', completedAt(up.origin, 'elsewhere/result.png'));
    const id = await submit('redirected');
    const task = await h.waitForTask(id);
    expect(task.status).toBe('failed');
    expect(task.error).toBe(
      "the upstream's result URL is not allowed: it redirects to a loopback address; result files are fetched only from public addresses and from the provider's own configured address",
    );
    expect(up.privateHits).toBe(0);
    // one generation, one attempt: asking again would only get the same URL
    expect(up.creates.get('redirected')).toBe(1);
    expect(task).toMatchObject({ attempts: 1, upstream: { generation: 0 } });
    const reply = body(await h.app.inject({ method: 'GET', url: `/v1/result/${id}`, headers: h.auth() }));
    expect(reply.error).not.toMatch(/127\.0\.0\.|:\d{2,5}/);
  });

  it('an unknown status is checked again on the same generation, then fails the task with what the upstream answered; the circuit stays closed (G272)', async () => {
    up.script('unknown status', (_n, id) => json({ id, object: 'image.generation', status: 'unknown', progress: 0, image_url: null, error: null }));
    const task = await h.waitForTask(await submit('unknown status'));
    expect(task.status).toBe('failed');
    expect(task.error).toBe(
      `the relay upstream "up" answered with a task status the contract does not have ("unknown") (at ${MAX_REPLY_PROBLEMS} checks in a row); the task was given up`,
    );
    expect(up.creates.get('unknown status')).toBe(1);
    expect(task).toMatchObject({ attempts: 1, upstream: { generation: 0, replyProblems: MAX_REPLY_PROBLEMS - 1 } });
    circuitClosed();
  });

  it('a malformed reply for one task fails that task only; the others on the channel complete; the circuit stays closed (G272)', async () => {
    up.script('malformed', () => json('{"id": "x", "status": '));
    up.script('healthy', (n, id) => (n < 2 ? queued(id) : completedAt(up.origin, 'own/healthy.png')(n, id)));
    const [bad, good] = await Promise.all([submit('malformed'), submit('healthy')]);
    const failed = await h.waitForTask(bad);
    expect(failed.status).toBe('failed');
    expect(failed.error).toMatch(/^the relay upstream "up" answered with malformed JSON \(at \d+ checks in a row\); the task was given up$/);
    expect((await h.waitForTask(good)).status).toBe('completed');
    expect(up.creates.get('malformed')).toBe(1);
    circuitClosed();
  });

  it('a reply garbled for a while (a 400 to the status query, then malformed) and then right completes on the same generation (G272)', async () => {
    up.script('garbled', (n, id) =>
      n === 0
        ? json({ error: { message: 'bad request' } }, 400)
        : n === 1
          ? json('<html>proxy error page</html>')
          : completedAt(up.origin, 'own/garbled.png')(n, id),
    );
    const task = await h.waitForTask(await submit('garbled'));
    expect(task.status, task.error ?? '').toBe('completed');
    expect(up.creates.get('garbled')).toBe(1);
    expect(task.upstream).toMatchObject({ generation: 0 });
    circuitClosed();
  });
});

describe('a permanently dead upstream', () => {
  let h: Harness;
  const C = 1_000_000;

  beforeAll(async () => {
    const dead = createRelayProvider({ id: 'dead', baseUrl: `http://127.0.0.1:${await freePort()}`, pollSeconds: 0.05, connectTimeoutMs: 1000 });
    h = await createHarness({
      env: { MEDIAGATE_CREDITS: 'on', MEDIAGATE_UNAVAILABLE_FAIL_SECONDS: '3' },
      providers: [dead],
      routes: { '*': [{ provider: 'dead', priority: 0, weight: 1 }] },
      breaker: { failuresToOpen: 2, openMs: 60_000, maxOpenMs: 60_000 },
    });
  }, 60_000);
  afterAll(async () => {
    await h?.close();
  });

  it('the waiting task says queue_reason "upstream_unavailable", fails after MEDIAGATE_UNAVAILABLE_FAIL_SECONDS, its hold released (G274)', async () => {
    const account = (await h.store.keys.findActiveByHash(hashApiKey(h.key)))!.accountId;
    await h.store.credits.grant(account, 10 * C, 'dead upstream test', Date.now());
    const res = await h.app.inject({ method: 'POST', url: '/v1/pic/images', headers: h.auth(), payload: { model: 'pic', prompt: 'nobody home' } });
    expect(res.statusCode, res.body).toBe(200);
    const id = body(res).id as string;
    const query = async () => body(await h.app.inject({ method: 'GET', url: `/v1/result/${id}`, headers: h.auth() }));
    expect(await query()).toMatchObject({ status: expect.stringMatching(/queued|processing/) });

    const waiting = await waitFor(
      async () => {
        const r = await query();
        return r.queue_reason === 'upstream_unavailable' ? r : undefined;
      },
      10_000,
      'the task waiting for an upstream',
    );
    expect(waiting).toMatchObject({ status: 'queued', error: null, queue_reason: 'upstream_unavailable' });
    expect((await h.store.credits.getAccount(account))!.availableMicro).toBe(9 * C);
    // the task list says it too
    const list = body(await h.app.inject({ method: 'GET', url: '/v1/tasks', headers: h.auth() }));
    expect(list.data[0]).toMatchObject({ id, queue_reason: 'upstream_unavailable' });

    const failed = await h.waitForTask(id, ['failed', 'completed', 'cancelled'], 15_000);
    expect(failed.status).toBe('failed');
    expect(failed.error).toBe(
      'no upstream of model pic could take this task for 3 s (each refused it or is paused after repeated faults); nothing in the request caused it, submit it again later',
    );
    expect(await query()).toMatchObject({ status: 'failed', queue_reason: null });
    expect((await h.store.credits.getAccount(account))!.availableMicro).toBe(10 * C);
  }, 30_000);
});
