/**
 * Replies of the wrong shape for table-driven tests of the provider adapters' reply parsing
 * (G272, G453): whole bodies that are not the API's (null, a string, a list, `{}`, non-JSON,
 * truncated JSON, an empty body, a huge number) and every field of a valid reply replaced by a value
 * of another type; a scripted upstream on loopback that answers them and counts the calls; and how
 * the task engine takes what an adapter made of them. Test-only.
 */
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ChannelError, GenerationKeyConflict, UnexpectedReply, UnrecoverableError, type CheckResult, type StartResult } from '../../src/providers/types.js';

export interface Reply {
  status?: number;
  headers?: Record<string, string>;
  body: string;
}

export interface SeenRequest {
  method: string;
  path: string;
  body: string;
}

export interface ScriptedUpstream {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  requests: SeenRequest[];
  /** How many requests matched `method` and a path starting with `prefix` (a path given as a RegExp is tested). */
  count(method: string, path: string | RegExp): number;
  close(): Promise<void>;
}

/** An upstream answering each request with what `answer` says of it (undefined: 404). */
export async function startScriptedUpstream(answer: (req: SeenRequest) => Reply | undefined): Promise<ScriptedUpstream> {
  const requests: SeenRequest[] = [];
  const server = http.createServer(async (req, res) => {
    const parts: Buffer[] = [];
    for await (const c of req) parts.push(c as Buffer);
    const seen = { method: req.method ?? '', path: req.url ?? '', body: Buffer.concat(parts).toString('utf8') };
    requests.push(seen);
    const reply = answer(seen) ?? { status: 404, body: '{"error":"not found"}' };
    res.writeHead(reply.status ?? 200, { 'content-type': 'application/json', ...reply.headers }).end(reply.body);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    requests,
    count: (method, path) => requests.filter((r) => r.method === method && (typeof path === 'string' ? r.path.startsWith(path) : path.test(r.path))).length,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** Values of every other type, put where a reply has a field. */
const WRONG_VALUES: ReadonlyArray<[string, unknown]> = [
  ['null', null],
  ['a string', 'x'],
  ['a list', ['x']],
  ['an object', { x: 1 }],
  ['a huge number', 1e308],
  ['a negative number', -1],
  ['true', true],
];

/** Whole bodies that are not the API's answer, whatever it is. */
export const WRONG_BODIES: ReadonlyArray<[string, string]> = [
  ['an empty body', ''],
  ['non-JSON (a proxy page)', '<html><body>502 Bad Gateway</body></html>'],
  ['null', 'null'],
  ['a JSON string', '"ok"'],
  ['a list', '[]'],
  ['an empty object', '{}'],
  ['a huge number', '1e400'],
];

/** Every path to a value in `json` (objects' keys, lists' indexes), the root excepted. */
function pathsOf(json: unknown, at: Array<string | number> = []): Array<Array<string | number>> {
  if (Array.isArray(json)) return json.flatMap((v, i) => [[...at, i], ...pathsOf(v, [...at, i])]);
  if (json && typeof json === 'object') return Object.entries(json).flatMap(([k, v]) => [[...at, k], ...pathsOf(v, [...at, k])]);
  return [];
}

function replaced(json: unknown, path: Array<string | number>, value: unknown): unknown {
  if (path.length === 0) return value;
  const [head, ...rest] = path;
  const copy: any = Array.isArray(json) ? [...json] : { ...(json as object) };
  copy[head as string] = replaced(copy[head as string], rest, value);
  return copy;
}

/**
 * `valid` with bodies of the wrong shape: the whole-body ones, `valid` truncated, and each field (at
 * any depth) replaced by each value of another type, or removed. Names say which.
 */
export function malformedVariants(valid: unknown): Array<[string, string]> {
  const text = JSON.stringify(valid);
  const out: Array<[string, string]> = [...WRONG_BODIES, ['truncated JSON', text.slice(0, Math.floor(text.length / 2))]];
  for (const path of pathsOf(valid)) {
    const name = path.join('.');
    for (const [what, value] of WRONG_VALUES) out.push([`${name} as ${what}`, JSON.stringify(replaced(valid, path, value))]);
    // a key left out (JSON.stringify drops it); an element of a list cannot be
    const parent = path.slice(0, -1).reduce<any>((o, k) => o?.[k], valid);
    if (!Array.isArray(parent)) out.push([`${name} missing`, JSON.stringify(replaced(valid, path, undefined))]);
  }
  return out;
}

/** What the task engine does with how a start ended (src/tasks/task-work.ts, step-outcome.ts). */
export type StartClass = 'started' | 'done' | 'next candidate' | 'unreadable create' | 'refused' | 'new generation' | 'retried (plain error)';

export async function classifyStart(run: () => Promise<StartResult>): Promise<{ class: StartClass; error?: unknown }> {
  try {
    const r = await run();
    return { class: r.state };
  } catch (err) {
    if (err instanceof ChannelError) return { class: 'next candidate', error: err };
    if (err instanceof UnexpectedReply) return { class: 'unreadable create', error: err };
    if (err instanceof UnrecoverableError) return { class: 'refused', error: err };
    if (err instanceof GenerationKeyConflict) return { class: 'new generation', error: err };
    return { class: 'retried (plain error)', error: err };
  }
}

/** What the task engine does with how a check ended. */
export type CheckClass = 'pending' | 'completed' | 'failed' | 'unfollowable' | 'checked again (bounded)' | 'checked again (unbounded)';

export async function classifyCheck(run: () => Promise<CheckResult>): Promise<{ class: CheckClass; error?: unknown }> {
  try {
    const r = await run();
    return { class: r.state, ...(r.state === 'failed' && { error: r.error }) };
  } catch (err) {
    // a reply problem: the same generation checked again, at most MAX_REPLY_PROBLEMS times in a row (G272)
    if (err instanceof UnexpectedReply) return { class: 'checked again (bounded)', error: err };
    // the generation can never be followed: the task fails (G464)
    if (err instanceof UnrecoverableError) return { class: 'unfollowable', error: err };
    // anything else: a check that could not be made, looked at again until the attempt time limit
    return { class: 'checked again (unbounded)', error: err };
  }
}

/** A line a failing assertion prints: the class and what was thrown. */
export const said = (r: { class: string; error?: unknown }): string =>
  `${r.class}${r.error ? `: ${(r.error as Error).name} ${(r.error as Error).message}` : ''}`;
