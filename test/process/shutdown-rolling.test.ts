/**
 * A rolling restart under load (issue 28, G340-G343): two `mediagate serve` processes on one
 * PostgreSQL database and one data directory, behind a small round-robin proxy of the test's own
 * that keeps connections to them alive (as nginx's upstream keepalive does) and tries the other
 * process only when a connection is refused (nothing was sent). Client loops submit pictures and
 * long-poll them without pause while each process in turn gets SIGTERM, exits, and is started again.
 * With a grace of 1 s, generations running at the signal either finish or go back to the queue.
 *
 * Like nginx (`proxy_next_upstream error`) and as RFC 9112 section 9.3.1 allows for idempotent
 * requests, the proxy sends a request again, to the next backend, when its connection was reset
 * before any byte of a reply: the races no server can prevent (G341), a process closing its idle
 * connections at the end of its drain just as the proxy reuses one, or closing its listener with a
 * connection still in the kernel's accept queue. Such a request was never read (every request here
 * is a GET or a create with an Idempotency-Key, so even a read one is safe to repeat); the proxy
 * counts them.
 *
 * Then: no caller saw a 5xx or a failed request and the proxy never met a connection reset on a new
 * connection or a reply cut short (each is recorded with what it was); every accepted task completed,
 * exactly once (one "task completed" line across all processes), each with attempts = 1 in the
 * database; both stopped processes exited 0; each answered requests on connections kept alive from
 * before its signal with `Connection: close` (the drain was exercised, not just refused connections).
 */
import http from 'node:http';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/temp-root.js';
import { waitFor } from '../helpers/wait-for.js';
import { httpCall } from '../helpers/http-client.js';
import { postgresDatabase, postgresUnavailable } from '../helpers/postgres.js';
import { ensureBuilt, startServerProcess, type ServerProcess } from '../helpers/process.js';

const unavailable = await postgresUnavailable();

const KEY = 'rolling-restart-key-0123456789ab';
const LOOPS = 6;
const TERMINAL = ['completed', 'failed', 'cancelled'];

interface Backend {
  url: string;
  agent: http.Agent;
  /** Replies it gave with `Connection: close` (its drain answering a kept-alive connection). */
  closing: number;
}

/** The test's load balancer: round robin; a refused connection goes to the next backend; anything else failing is recorded. */
class RoundRobinProxy {
  readonly backends: Backend[] = [];
  readonly failures: string[] = [];
  /** Requests sent again because their connection was reset before any reply (see above). */
  readonly resent: string[] = [];
  private next = 0;
  private readonly server = http.createServer((req, res) => {
    void this.forward(req, res);
  });
  url = '';

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  setBackend(i: number, url: string): void {
    this.backends[i]?.agent.destroy();
    this.backends[i] = { url, agent: new http.Agent({ keepAlive: true }), closing: this.backends[i]?.closing ?? 0 };
  }

  private async forward(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    const start = this.next++;
    for (let i = 0; i < this.backends.length; i++) {
      const backend = this.backends[(start + i) % this.backends.length]!;
      const outcome = await this.send(backend, req, body, res);
      if (outcome === 'done') return;
    }
    this.failures.push(`${req.method} ${req.url}: every backend refused the connection or reset a kept-alive one`);
    res.writeHead(502).end();
  }

  /**
   * One try at one backend: 'refused' when its connection was refused (nothing sent), 'resend' when
   * its connection was reset before any reply, else done (answered or recorded).
   */
  private send(backend: Backend, req: http.IncomingMessage, body: Buffer, res: http.ServerResponse): Promise<'refused' | 'resend' | 'done'> {
    return new Promise((resolve) => {
      let answered = false;
      const out = http.request(
        `${backend.url}${req.url}`,
        { method: req.method, agent: backend.agent, headers: { ...req.headers, host: new URL(backend.url).host, connection: 'keep-alive' } },
        (answer) => {
          answered = true;
          if (answer.headers.connection === 'close') backend.closing++;
          if (answer.statusCode! >= 500) this.failures.push(`${req.method} ${req.url}: ${answer.statusCode} from ${backend.url}`);
          const headers = { ...answer.headers };
          delete headers.connection; // the proxy's own connection to its client stays open
          delete headers['keep-alive'];
          res.writeHead(answer.statusCode!, headers);
          answer.pipe(res);
          answer.on('aborted', () => this.failures.push(`${req.method} ${req.url}: reply cut short by ${backend.url}`));
          answer.on('end', () => resolve('done'));
        },
      );
      out.on('error', (err: NodeJS.ErrnoException) => {
        if (err.code === 'ECONNREFUSED') {
          resolve('refused');
          return;
        }
        if (!answered && (err.code === 'ECONNRESET' || err.code === 'EPIPE')) {
          this.resent.push(`${req.method} ${req.url}: ${err.code} from ${backend.url} on a ${out.reusedSocket ? 'kept-alive' : 'new'} connection`);
          resolve('resend');
          return;
        }
        this.failures.push(
          `${req.method} ${req.url}: ${err.code ?? err.message} from ${backend.url} on a ${out.reusedSocket ? 'kept-alive' : 'new'} connection`,
        );
        if (!res.headersSent) res.writeHead(502);
        res.end();
        resolve('done');
      });
      out.end(body);
    });
  }

  async close(): Promise<void> {
    for (const b of this.backends) b.agent.destroy();
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

describe.skipIf(unavailable !== undefined)(`a rolling restart under load${unavailable ? ` (skipped: ${unavailable})` : ''}`, () => {
  const database = postgresDatabase();
  const proxy = new RoundRobinProxy();
  const procs: ServerProcess[] = [];
  let dataDir = '';
  let env: Record<string, string> = {};
  let db: pg.Pool | undefined;

  beforeAll(async () => {
    ensureBuilt();
    await proxy.start();
    dataDir = tempDir('mediagate-rolling-');
    env = {
      MEDIAGATE_DATABASE_URL: await database.empty(),
      MEDIAGATE_DATA_DIR: dataDir,
      MEDIAGATE_BOOTSTRAP_KEY: KEY,
      MEDIAGATE_PUBLIC_URL: proxy.url,
      MEDIAGATE_SIGNING_SECRET: 'rolling-restart-signing-secret-0123456789',
      MEDIAGATE_SANDBOX_TIMING: 'fast',
      MEDIAGATE_SHUTDOWN_GRACE_SECONDS: '1',
      MEDIAGATE_RATE_LIMIT: 'off',
      MEDIAGATE_MAX_TASKS_IN_FLIGHT: '0',
      MEDIAGATE_LOG_LEVEL: 'info',
    };
    db = new pg.Pool({ connectionString: env.MEDIAGATE_DATABASE_URL, max: 2 });
  }, 200_000);

  afterAll(async () => {
    for (const p of procs) if (p.child.exitCode === null) p.child.kill('SIGKILL');
    await proxy.close();
    await db?.end().catch(() => undefined);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }, 60_000);

  const start = async (slot: number): Promise<ServerProcess> => {
    const p = await startServerProcess(env);
    procs.push(p);
    proxy.setBackend(slot, p.url);
    return p;
  };

  it('loses no task, uses no attempt, and shows callers no 5xx and no reset', async () => {
    // the first two start one after the other: they migrate the empty database
    const a = await start(0);
    const b = await start(1);

    const accepted: string[] = [];
    const failures: string[] = [];
    let completed = 0;
    let stop = false;
    const client = new http.Agent({ keepAlive: true });
    const loop = async (n: number): Promise<void> => {
      for (let i = 0; !stop; i++) {
        const created = await httpCall(`${proxy.url}/v1/pic/images`, {
          key: KEY,
          agent: client,
          json: { model: 'pic', prompt: `rolling ${n}.${i}` },
          headers: { 'idempotency-key': `rolling-${n}-${i}` },
        }).catch((err: NodeJS.ErrnoException) => ({ status: 0, body: err.code ?? err.message }));
        if (created.status !== 200) {
          failures.push(`submit: ${created.status} ${created.body}`);
          if (failures.length > 50) return;
          continue;
        }
        const id = JSON.parse(created.body).id as string;
        accepted.push(id);
        for (;;) {
          const polled = await httpCall(`${proxy.url}/v1/result/${id}?wait=2`, { key: KEY, agent: client }).catch((err: NodeJS.ErrnoException) => ({
            status: 0,
            body: err.code ?? err.message,
          }));
          if (polled.status !== 200) {
            failures.push(`poll: ${polled.status} ${polled.body}`);
            if (failures.length > 50) return; // broken: the assertions below say how
            continue;
          }
          if (TERMINAL.includes(JSON.parse(polled.body).status)) {
            completed++;
            break;
          }
        }
      }
    };
    const loops = Array.from({ length: LOOPS }, (_, n) => loop(n));
    const progress = (more: number, what: string): Promise<boolean> => {
      const target = completed + more;
      return waitFor(() => (completed >= target ? true : undefined), 120_000, what);
    };

    await progress(15, 'tasks to complete before the first restart');
    a.child.kill('SIGTERM');
    expect(await a.exited).toBe(0);
    const a2 = await start(0);
    await progress(15, 'tasks to complete after the first restart');
    b.child.kill('SIGTERM');
    expect(await b.exited).toBe(0);
    const b2 = await start(1);
    await progress(15, 'tasks to complete after the second restart');
    stop = true;
    await Promise.all(loops);
    client.destroy();

    expect({ callers: failures, proxy: proxy.failures }).toEqual({ callers: [], proxy: [] });
    // the race of G341 is rare: at most a request or two per restart meets it
    expect(proxy.resent.length, proxy.resent.join('\n')).toBeLessThanOrEqual(4);
    const { rows } = await db!.query<{ id: string; status: string; attempts: number }>('SELECT id, status, attempts FROM tasks');
    expect(rows.map((r) => r.id).sort()).toEqual([...accepted].sort());
    expect(rows.filter((r) => r.status !== 'completed' || r.attempts !== 1)).toEqual([]);
    // each drained process answered kept-alive connections after its signal (with Connection: close)
    expect(proxy.backends.map((backend) => backend.closing > 0)).toEqual([true, true]);

    for (const p of [a2, b2]) p.child.kill('SIGTERM');
    expect(await Promise.all([a2.exited, b2.exited])).toEqual([0, 0]);
    // read once every process has ended: a poll can see a task completed before the worker's log
    // line of it has come through the pipe
    const logs = [a, b, a2, b2]
      .map((p) => p.output())
      .join('\n')
      .split('\n');
    const completions = logs.filter((l) => l.includes('"task completed"')).map((l) => /"taskId":"([^"]+)"/.exec(l)![1]!);
    expect(completions.sort()).toEqual([...accepted].sort());
  }, 400_000);
});
