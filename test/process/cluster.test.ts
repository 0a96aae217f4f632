/**
 * The gateway as a cluster (issue 15): two API processes and two worker processes of the real
 * gateway (`mediagate serve --role api|worker`), each with a data directory of its own, sharing only
 * one PostgreSQL database, one bucket and the signing secret. The sandbox makes real media: a burst
 * across every family goes through both API processes while one worker is kill -9'd holding tasks,
 * and every task completes exactly once (checked by a trigger of the test's own in the database,
 * not by what the gateway says); a cancel on one API process stops the other process's worker; a
 * long-poll on one API process is answered by the worker's completion; results come from the bucket.
 *
 * The providers file gives the burst a `fast` sandbox and two models a `realistic` one (a picture
 * takes ~10 s, a video minutes): slow enough that a cancel and a long-poll surely find their task
 * still running. No wall-clock millisecond is asserted: a signal that did not cross the processes
 * would leave a cancel unnoticed or a poll unanswered, and the waits below would time out.
 */
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCluster, type Cluster, type ClusterProcess } from '../helpers/cluster.js';
import { configFiles } from '../helpers/config-files.js';
import { fetchJson } from '../helpers/gateway-calls.js';
import { waitFor } from '../helpers/wait-for.js';
import { postgresDatabase, postgresUnavailable } from '../helpers/postgres.js';
import { ensureBuilt, runCliAsync } from '../helpers/process.js';
import { type S3Server, startS3Server, useS3Credentials } from '../helpers/s3-server.js';
import { installTerminalLog, type TerminalWrite } from '../helpers/terminal-log.js';

const unavailable = await postgresUnavailable();

const KEY = 'cluster-test-key-0123456789abcdef';
const PUBLIC_URL = 'http://gateway.cluster.test'; // the load balancer's address: every API process signs the same links
const TASKS = 300;
/** Models routed to the realistic (slow) sandbox; the burst uses none of them. */
const SLOW_PIC = 'pic-pro';
const SLOW_MOTION = 'motion_2_0_fast';

/**
 * One create call per kind; the burst takes them in turn. Pictures weigh most (cheap): the test is
 * about records (each task completed once, across the kill), not pixels, and a 720p video costs the
 * workers 5-10 times a picture's CPU; every family is in (30 videos of 300 tasks: G473).
 */
const KINDS: Array<{ route: string; body: (i: number) => Record<string, unknown> }> = [
  ...Array.from({ length: 45 }, () => ({ route: '/v1/pic/images', body: (i: number) => ({ model: 'pic', prompt: `burst ${i}`, size: '21:9' }) })),
  { route: '/clip/videos', body: (i) => ({ model: 'clip_3_1_fast', prompt: `burst ${i}` }) },
  { route: '/reel/videos', body: (i) => ({ model: 'reelOa2Plus', prompt: `burst ${i}`, duration: 4 }) },
  { route: '/v1/motion/videos', body: (i) => ({ model: 'motion_2_0_4s_5s', content: [{ type: 'text', text: `burst ${i}` }], duration: 1 }) },
  { route: '/v1/videos/videos', body: (i) => ({ model: 'videos_fast', prompt: `burst ${i}`, duration: 4 }) },
  {
    route: '/v2/model-center/tasks',
    body: (i) => ({ model: 'sd_2.0_fast_discount', prompt: `burst ${i}`, duration: 4, resolution: '480p', generate_audio: false }),
  },
];

const call = (base: string, route: string, init: { method?: string; body?: unknown } = {}) => fetchJson(`${base}${route}`, KEY, init.method, init.body);

async function submit(api: ClusterProcess, route: string, body: unknown): Promise<string> {
  const r = await call(api.url, route, { method: 'POST', body });
  expect(r.status, JSON.stringify(r.json)).toBe(200);
  return (r.json.id ?? r.json.data?.projectId) as string;
}

/** The task's final reply, long-polled on `api` (each poll answers when the status changes). */
async function finalReply(api: ClusterProcess, id: string): Promise<Record<string, any>> {
  for (;;) {
    const r = await call(api.url, `/v1/result/${id}?wait=20`);
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    if (['completed', 'failed', 'cancelled'].includes(r.json.status as string)) return r.json;
  }
}

/** The result links of a reply (`image_url`, `video_url`, `result_url` ...), each at `api`'s origin instead of the public one. */
function resultLinks(reply: Record<string, any>, api: ClusterProcess): string[] {
  const links = new Set<string>();
  const visit = (v: unknown): void => {
    if (typeof v === 'string' && v.startsWith(`${PUBLIC_URL}/files/`)) links.add(api.url + v.slice(PUBLIC_URL.length));
    else if (v && typeof v === 'object') for (const x of Object.values(v)) visit(x);
  };
  visit(reply);
  return [...links];
}

/** Every file under `dir`, as paths relative to it. */
function filesUnder(dir: string): string[] {
  return (fs.readdirSync(dir, { recursive: true, withFileTypes: true }) as fs.Dirent[])
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)));
}

describe.skipIf(unavailable !== undefined)(`a cluster of 2 API and 2 worker processes${unavailable ? ` (skipped: ${unavailable})` : ''}`, () => {
  const database = postgresDatabase();
  const files = configFiles('mediagate-cluster-');
  let s3: S3Server | undefined;
  let cluster: Cluster | undefined;
  let db: pg.Pool | undefined;
  let dbUrl = '';
  let log: Awaited<ReturnType<typeof installTerminalLog>> | undefined;
  let api1: ClusterProcess;
  let api2: ClusterProcess;
  /** Burst task id -> the API process that accepted it. */
  const burst = new Map<string, ClusterProcess>();

  const task = async (id: string): Promise<{ status: string; lease_owner: string | null; progress: number; attempts: number }> => {
    const { rows } = await db!.query('SELECT status, lease_owner, progress, attempts FROM tasks WHERE id = $1', [id]);
    return rows[0];
  };
  const writesOf = async (id: string): Promise<TerminalWrite[]> => (await log!.writes()).filter((w) => w.taskId === id);
  const workerHolding = (owner: string | null): ClusterProcess | undefined => cluster!.workers.find((w) => cluster!.owns(w, owner));

  beforeAll(async () => {
    ensureBuilt();
    useS3Credentials(); // the child processes inherit them, as a deployment's environment would hand them over
    s3 = await startS3Server();
    const url = await database.empty();
    dbUrl = url;
    const providers = files.file({
      providers: { sandbox: { type: 'sandbox', timing: 'fast' }, slow: { type: 'sandbox', timing: 'realistic' } },
      routes: { [SLOW_PIC]: [{ provider: 'slow' }], [SLOW_MOTION]: [{ provider: 'slow' }] },
    });
    cluster = await startCluster({
      apis: 2,
      workers: 2,
      env: {
        ...s3.env(),
        MEDIAGATE_DATABASE_URL: url,
        MEDIAGATE_PROVIDERS: providers,
        MEDIAGATE_PUBLIC_URL: PUBLIC_URL,
        MEDIAGATE_SIGNING_SECRET: 'cluster-signing-secret-0123456789abcdef',
        MEDIAGATE_BOOTSTRAP_KEY: KEY,
        // a lease lapses 2 s after its worker stopped renewing it (the shortest there is): the killed worker's tasks come back quickly
        // many slots per worker: the fast sandbox's tasks mostly wait out its simulated time
        MEDIAGATE_LEASE_SECONDS: '2',
        MEDIAGATE_WORKER_CONCURRENCY: '16',
        MEDIAGATE_RATE_LIMIT: 'off',
        MEDIAGATE_MAX_TASKS_IN_FLIGHT: '0',
        MEDIAGATE_LOG_LEVEL: 'info',
      },
    });
    [api1, api2] = cluster.apis as [ClusterProcess, ClusterProcess];
    log = await installTerminalLog(url); // the processes migrated the database; nothing was submitted yet
    db = new pg.Pool({ connectionString: url, max: 4 });
  }, 240_000);

  afterAll(async () => {
    await cluster?.stop();
    await db?.end().catch(() => undefined);
    await log?.close().catch(() => undefined);
    await s3?.close();
  }, 60_000);

  it('a cancel on API 2 of a task submitted on API 1 stops the worker process running it', async () => {
    const id = await submit(api1, '/v1/motion/videos', { model: SLOW_MOTION, content: [{ type: 'text', text: 'a slow fox' }], duration: 5 });
    const running = await waitFor(
      async () => {
        const t = await task(id);
        return t.status === 'processing' && workerHolding(t.lease_owner) ? t : undefined;
      },
      30_000,
      'a worker to run the slow task',
    );
    const worker = workerHolding(running.lease_owner)!;

    const cancelled = await call(api2.url, `/v1/motion/videos/${id}/cancel`, { method: 'POST' });
    expect(cancelled.status).toBe(200);
    expect(cancelled.json).toMatchObject({ id, status: 'cancelled' });
    // the worker, another process, is told and stops (its generation had minutes to go)
    await waitFor(
      () =>
        worker
          .output()
          .split('\n')
          .some((l) => l.includes('"msg":"task cancelled while running"') && l.includes(`"taskId":"${id}"`))
          ? true
          : undefined,
      30_000,
      'the worker to stop the cancelled task',
    );
    expect(await task(id)).toMatchObject({ status: 'cancelled', lease_owner: null });
    expect((await writesOf(id)).map((w) => w.status)).toEqual(['cancelled']);
    expect(await s3!.keys(`results/${id}/`)).toEqual([]);
  }, 60_000);

  it('a long-poll on API 2 for a task submitted on API 1 is answered when the worker completes it', async () => {
    const id = await submit(api1, '/v1/pic/images', { model: SLOW_PIC, prompt: 'a slow lighthouse', size: '21:9' });
    await waitFor(async () => (workerHolding((await task(id)).lease_owner) ? true : undefined), 30_000, 'a worker to run the slow task');
    let answered = false;
    const poll = call(api2.url, `/v1/result/${id}?wait=60`).finally(() => {
      answered = true;
    });
    // the worker moves the task on after the poll was sent, and the poll is still waiting then
    const sent = await task(id);
    await waitFor(
      async () => {
        const t = await task(id);
        return t.status === 'processing' && t.progress > sent.progress ? true : undefined;
      },
      30_000,
      'the worker to report progress',
    );
    expect(answered).toBe(false);
    expect(sent.status).toBe('processing');
    const reply = await poll;
    expect(reply.status).toBe(200);
    expect(reply.json).toMatchObject({ id, status: 'completed' });
    expect(resultLinks(reply.json, api2)).toHaveLength(1);
    const [write] = await writesOf(id);
    expect(write).toMatchObject({ status: 'completed', fromStatus: 'processing' });
    expect(workerHolding(write!.leaseOwner)).toBeDefined();
  }, 60_000);

  it(`a burst of ${TASKS} tasks over both API processes completes exactly once each across a kill -9 of a worker holding tasks`, async () => {
    const [victim, survivor] = cluster!.workers as [ClusterProcess, ClusterProcess];
    const victimHolds = async (): Promise<string[]> => {
      const { rows } = await db!.query<{ id: string; lease_owner: string }>(
        "SELECT id, lease_owner FROM tasks WHERE status = 'processing' AND lease_owner IS NOT NULL",
      );
      return rows.filter((r) => cluster!.owns(victim, r.lease_owner)).map((r) => r.id);
    };
    const victimCompleted = async (): Promise<number> => (await log!.writes()).filter((w) => cluster!.owns(victim, w.leaseOwner)).length;
    // the kill comes mid-burst: once 40% of it is accepted, the victim has completed some tasks, and it holds others
    let killed: string[] | undefined;
    const killer = waitFor(
      async () => {
        if (burst.size < TASKS * 0.4 || (await victimCompleted()) < 5 || (await victimHolds()).length === 0) return undefined;
        victim.child.kill('SIGKILL');
        await victim.exited;
        // a COMMIT the victim sent just before it died still lands: its holds are read once the
        // database has closed every session of the victim, when nothing of it can commit any more
        await waitFor(
          async () =>
            (await db!.query('SELECT 1 FROM pg_stat_activity WHERE application_name = $1', [`mediagate/${victim.pid}`])).rowCount === 0 ? true : undefined,
          30_000,
          "the database to close the victim's sessions",
        );
        killed = await victimHolds(); // what it held when it died: nothing lets go of these but the lease's end
        return true;
      },
      90_000,
      'the moment to kill the victim',
    );
    killer.catch(() => undefined); // awaited below, after the submits

    const refused: string[] = [];
    let next = 0;
    // 2 x 15 submitters, each on its own API process
    await Promise.all(
      Array.from({ length: 30 }, async (_, s) => {
        const api = s % 2 === 0 ? api1 : api2;
        while (next < TASKS) {
          const i = next++;
          const kind = KINDS[i % KINDS.length]!;
          const r = await call(api.url, kind.route, { method: 'POST', body: kind.body(i) });
          const id = (r.json.id ?? r.json.data?.projectId) as string | undefined;
          if (r.status !== 200 || !id) refused.push(`${r.status} ${JSON.stringify(r.json)}`);
          else burst.set(id, api);
        }
      }),
    );
    expect(refused).toEqual([]);
    expect(burst.size).toBe(TASKS);
    await killer;
    const orphaned = killed!;
    expect(orphaned.length).toBeGreaterThan(0);

    // every task completes, seen through both API processes
    const ids = [...burst.keys()];
    const finals = new Map<string, Record<string, any>>();
    await Promise.all(
      Array.from({ length: 20 }, async (_, s) => {
        for (let i = s; i < ids.length; i += 20) finals.set(ids[i]!, await finalReply(i % 2 === 0 ? api1 : api2, ids[i]!));
      }),
    );
    expect(ids.filter((id) => finals.get(id)!.status !== 'completed').map((id) => [id, finals.get(id)])).toEqual([]);

    // exactly once, by the database's own record: one terminal write per task, `completed`
    const writes = (await log!.writes()).filter((w) => burst.has(w.taskId));
    expect(writes).toHaveLength(TASKS);
    expect(new Set(writes.map((w) => w.taskId)).size).toBe(TASKS);
    expect(writes.every((w) => w.status === 'completed' && w.fromStatus === 'processing')).toBe(true);
    // each by the worker holding it then; the killed worker's tasks by the survivor, on a later attempt
    expect(writes.every((w) => workerHolding(w.leaseOwner) !== undefined)).toBe(true);
    for (const id of orphaned) {
      const write = writes.find((w) => w.taskId === id)!;
      const story = (p: ClusterProcess): string =>
        p
          .output()
          .split('\n')
          .filter((l) => l.includes(id))
          .join('\n');
      expect(
        cluster!.owns(survivor, write.leaseOwner),
        `${id}: completed by ${write.leaseOwner} (victim ${victim.pid}, survivor ${survivor.pid})\nvictim:\n${story(victim)}\nsurvivor:\n${story(survivor)}`,
      ).toBe(true);
      expect((await task(id)).attempts, id).toBeGreaterThanOrEqual(2);
    }
    expect(survivor.output()).toContain('"msg":"recovered tasks whose worker stopped"');
    const byWorker = (w: ClusterProcess) => writes.filter((x) => cluster!.owns(w, x.leaseOwner)).length;
    expect(byWorker(victim)).toBeGreaterThan(0);
    expect(byWorker(victim) + byWorker(survivor)).toBe(TASKS);

    // results come from the bucket: each link, fetched through the API process that did not accept
    // the task, answers the media (a PNG or an MP4) that is the bucket's object
    const downloaded = new Set<string>();
    await Promise.all(
      Array.from({ length: 10 }, async (_, s) => {
        for (let i = s; i < ids.length; i += 10) {
          const id = ids[i]!;
          const links = resultLinks(finals.get(id)!, burst.get(id) === api1 ? api2 : api1);
          expect(links.length, id).toBeGreaterThan(0);
          for (const link of links) {
            const res = await fetch(link);
            expect(res.status, link).toBe(200);
            const bytes = Buffer.from(await res.arrayBuffer());
            expect(bytes.subarray(1, 4).toString() === 'PNG' || bytes.subarray(4, 8).toString() === 'ftyp', link).toBe(true);
            const key = `results/${id}/${decodeURIComponent(new URL(link).pathname.split('/').pop()!)}`;
            expect(bytes.equals(await s3!.object(key)), key).toBe(true);
            downloaded.add(id);
          }
        }
      }),
    );
    expect(downloaded.size).toBe(TASKS);

    // money moved exactly once with each terminal transition, the killed worker's tasks included:
    // the operator's reconcile finds every hold settled and the cached balances equal to the ledger
    const reconcile = await runCliAsync(['credits', 'reconcile'], { MEDIAGATE_DATABASE_URL: dbUrl, MEDIAGATE_DATA_DIR: files.dir });
    expect(reconcile.status, `${reconcile.stdout}${reconcile.stderr}`).toBe(0);
    expect(reconcile.stdout).toMatch(/ 0 holds open, 0 balance mismatches, 0 unsettled, 0 doubled$/m);

    // and no process keeps results on its own disk: the live ones hold no file at all; the killed
    // worker left its scratch work behind (its scratch folder, which no one serves from), nothing else
    for (const p of [...cluster!.apis, ...cluster!.workers]) {
      const held = filesUnder(p.dataDir);
      if (p === victim)
        expect(
          held.filter((f) => !f.startsWith(`tmp${path.sep}`)),
          p.dataDir,
        ).toEqual([]);
      else expect(held, p.dataDir).toEqual([]);
    }
  }, 180_000);
});
