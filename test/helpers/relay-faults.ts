/**
 * For the relay fault tests (test/relay-faults-*.test.ts): a relay pair (relay-pair.ts) with short
 * settings, tasks of several families submitted through the relaying gateway, and what must hold
 * whatever faults were injected: every task ends; each generation of a task is exactly one task at
 * the upstream, whatever number of creates it took; nothing a caller sees names the upstream.
 */
import { expect } from 'vitest';
import type { TaskRecord } from '../../src/store/types.js';
import type { Fault, FaultRule, SeenRequest } from './fault-proxy.js';
import { callRelaying, startRelayPair, type RelayPair, type RelayPairOptions } from './relay-pair.js';
import { countTasksByStatus } from './task-rows.js';

/** The relay's bound on one create, check or cancel, ms: a hung call fails after this (short, yet far above a real call here). */
export const RELAY_TIMEOUT_MS = 2500;

/**
 * A relay pair for fault tests: checks every 50 ms, calls bounded by RELAY_TIMEOUT_MS, and a
 * circuit that does not open (the faults are injected on purpose; circuits have tests of their own).
 */
export function startFaultPair(options: RelayPairOptions = {}): Promise<RelayPair> {
  return startRelayPair({
    ...options,
    relay: { timeoutMs: RELAY_TIMEOUT_MS, pollSeconds: 0.05, ...options.relay },
    relaying: { breaker: { failuresToOpen: 1000, openMs: 100, maxOpenMs: 100 }, ...options.relaying },
  });
}

export interface FamilyCase {
  /** The create path at the relaying gateway. */
  create: string;
  body(text: string): Record<string, unknown>;
  /** The status query of this family at the upstream, as the proxy sees it. */
  query: RegExp;
}

/** Families by where their creates and status queries go (pic and videos share `/v1/result/`). */
export const FAMILIES = {
  pic: { create: '/v1/pic/images', body: (text) => ({ model: 'pic', prompt: text }), query: /^\/v1\/result\// },
  // the smallest video the family accepts (720x720, 1 s: G417): these tests check the relay's bookkeeping, not the pixels
  motion: {
    create: '/v1/motion/videos',
    body: (text) => ({ model: 'motion_2_0_4s_5s', content: [{ type: 'text', text }], duration: 1, ratio: '1:1' }),
    query: /^\/power\/v1\/result\//,
  },
  // already the smallest the family accepts (720p, 4 s)
  videos: { create: '/v1/videos/videos', body: (text) => ({ model: 'videos_fast', prompt: text, duration: 4, ratio: '9:16' }), query: /^\/v1\/result\// },
  'model-center': {
    create: '/v2/model-center/tasks',
    body: (text) => ({ model: 'imagegen-5.0', prompt: text, size: '320x200' }),
    query: /^\/v2\/model-center\/tasks\//,
  },
} satisfies Record<string, FamilyCase>;

export type FamilyName = keyof typeof FAMILIES;

/** The status query of any of FAMILIES at the upstream. */
export const ANY_QUERY = new RegExp(
  Object.values(FAMILIES)
    .map((f) => f.query.source)
    .join('|'),
);

/** Submits a task through the relaying gateway; answers its id there. */
export async function submit(pair: RelayPair, family: FamilyName, text: string): Promise<string> {
  const f: FamilyCase = FAMILIES[family];
  const created = await callRelaying(pair, 'POST', f.create, f.body(text));
  expect(created.status, JSON.stringify(created.json)).toBe(200);
  return (created.json.id ?? created.json.data?.projectId) as string;
}

/** How many tasks the upstream has (of every status). */
export async function upstreamTaskCount(pair: RelayPair): Promise<number> {
  return Object.values(await countTasksByStatus(pair.upstream.store.tasks)).reduce((a, b) => a + b, 0);
}

/** The creates the proxy saw for relaying task `id` (every generation: `<id>`, `<id>.<n>`), in order. */
export function createsOf(pair: RelayPair, id: string): SeenRequest[] {
  return pair.proxy.requests.filter((r) => r.method === 'POST' && (r.idempotencyKey === id || r.idempotencyKey?.startsWith(`${id}.`)));
}

/**
 * The upstream tasks made for relaying task `id`, in the order of their first create: one per
 * generation. A create may be sent again under its key (a relay timeout on a loaded machine, a
 * connection broken after sending, G124): the upstream answers the same task, counted once.
 */
export function upstreamTasksOf(pair: RelayPair, id: string): string[] {
  return [
    ...new Set(
      createsOf(pair, id)
        .map(upstreamIdIn)
        .filter((u) => u !== undefined),
    ),
  ];
}

/** The upstream task id in a create answer the upstream gave (`id`, or the videos envelope's `data.projectId`). */
export function upstreamIdIn(create: SeenRequest): string | undefined {
  if (create.response === undefined || create.targetStatus === undefined || create.targetStatus >= 300) return undefined;
  const json = JSON.parse(create.response) as { id?: string; data?: { projectId?: string } };
  return json.id ?? json.data?.projectId;
}

/**
 * Each generation of a relaying task is exactly one upstream task: the keys of its creates are
 * `<id>`, `<id>.1` ... up to its generation, and every create of one key the upstream answered
 * answered the same upstream task, which exists there (a failed task's last generation may have
 * none: its create was refused). Answers the number of upstream tasks made for it.
 */
export async function expectOneUpstreamTaskPerGeneration(pair: RelayPair, task: TaskRecord): Promise<number> {
  const generation = task.upstream?.generation ?? 0;
  const keys = Array.from({ length: generation + 1 }, (_, g) => (g === 0 ? task.id : `${task.id}.${g}`));
  const creates = createsOf(pair, task.id);
  expect(new Set(creates.map((c) => c.idempotencyKey)), task.id).toEqual(new Set(keys));
  let made = 0;
  for (const [g, key] of keys.entries()) {
    const answered = [
      ...new Set(
        creates
          .filter((c) => c.idempotencyKey === key)
          .map(upstreamIdIn)
          .filter((u) => u !== undefined),
      ),
    ];
    const refused = task.status === 'failed' && g === generation && answered.length === 0;
    expect(answered.length, `upstream tasks made for ${key}`).toBe(refused ? 0 : 1);
    if (answered[0] !== undefined) expect(await pair.upstream.store.tasks.get(answered[0]), key).toBeDefined();
    if (g === generation) expect(task.upstream?.ref?.id, 'the generation the task knows').toBe(answered[0]);
    made += answered.length;
  }
  return made;
}

/** What must never reach a caller: the proxy's and the upstream's addresses (host, port), and the upstream key. */
export function expectNothingOfTheUpstream(pair: RelayPair, text: string): void {
  const ports = [pair.proxy.port, Number(new URL(pair.upstream.origin).port)];
  const needles = [pair.proxy.url, pair.upstream.origin, ...ports.flatMap((p) => [`127.0.0.1:${p}`, `localhost:${p}`, `port ${p}`]), pair.upstream.key];
  for (const n of needles) expect(text, `names ${n}`).not.toContain(n);
}

/**
 * Waits until every task ends; checks the generations of each against the upstream, and that
 * the upstream has made exactly that many tasks since `upstreamBefore` (none duplicated, none
 * made for nothing); checks that what a caller sees of each (its query reply, its error) names
 * nothing of the upstream. Answers the tasks.
 */
export async function settleAll(pair: RelayPair, ids: readonly string[], upstreamBefore: number, timeoutMs = 30_000): Promise<TaskRecord[]> {
  const tasks = await Promise.all(ids.map((id) => pair.relaying.waitForTask(id, undefined, timeoutMs)));
  let made = 0;
  for (const task of tasks) {
    made += await expectOneUpstreamTaskPerGeneration(pair, task);
    const query = await callRelaying(pair, 'GET', `/v1/result/${task.id}`);
    expect(query.status).toBe(200);
    expect(query.json.status).toBe(task.status);
    expectNothingOfTheUpstream(pair, JSON.stringify(query.json));
    if (task.error !== null) expectNothingOfTheUpstream(pair, task.error);
  }
  expect((await upstreamTaskCount(pair)) - upstreamBefore, 'tasks the upstream made').toBe(made);
  return tasks;
}

/** Every task completed, its result re-hosted at the relaying gateway. */
export function expectCompleted(pair: RelayPair, tasks: readonly TaskRecord[]): void {
  for (const t of tasks) {
    expect(t.status, `${t.id} ${t.family}: ${t.error ?? ''}`).toBe('completed');
    expect(t.result?.files.length, t.id).toBeGreaterThan(0);
    expect(
      t.result?.sourceUrls?.every((u) => u.startsWith(`${pair.proxy.url}/files/`)),
      t.id,
    ).toBe(true);
  }
}

/** A RegExp matching `text` as it is. */
export const escaped = (text: string): RegExp => new RegExp(text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));

export interface CreateCase {
  family: FamilyName;
  id: string;
  rule: FaultRule;
}

/**
 * One task per family whose first create meets `fault` (matched by a marker in its body, so they
 * run together); answers them once all ended, completed, each sent back to the queue once without
 * using an attempt (the channel's fault, not the task's), or after `attempts` attempts (a reply
 * problem of the task's own, G272).
 */
export async function createFault(pair: RelayPair, name: string, fault: Fault, families: readonly FamilyName[], attempts = 1): Promise<CreateCase[]> {
  const before = await upstreamTaskCount(pair);
  const cases = await Promise.all(
    families.map(async (family) => {
      const marker = `create fault ${name} for ${family}.`;
      const rule = pair.proxy.addRule({ match: { method: 'POST', body: escaped(marker) }, times: 1, fault });
      return { family, id: await submit(pair, family, marker), rule };
    }),
  );
  const tasks = await settleAll(
    pair,
    cases.map((c) => c.id),
    before,
  );
  expectCompleted(pair, tasks);
  for (const [i, c] of cases.entries()) {
    expect(c.rule.applied, c.family).toBe(1);
    // one attempt (a reply problem of the task's own: one more, G272); its return to the queue (seen above) no longer counts once a create was accepted (G123)
    expect([tasks[i]!.attempts, tasks[i]!.serverFaults], c.family).toEqual([attempts, 0]);
  }
  return cases;
}

/** What the proxy did to each create of a task, in order, and what the client got (a status, or who closed the connection). */
export const createActions = (pair: RelayPair, id: string): Array<[string, string | number | undefined]> =>
  createsOf(pair, id).map((r) => [r.action, r.status ?? r.closedBy]);
