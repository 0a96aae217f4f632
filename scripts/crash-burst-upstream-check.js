// The checks of `scripts/crash-burst.js --relay` that read the two gateways' SQLite databases: every
// task of the relaying gateway completed, and each maps to exactly ONE task at the upstream (the
// upstream's tasks carry the Idempotency-Key of the create that made them, which is the relaying
// task's id, G86), the one its saved reference names; the upstream's idempotency record of that key
// answers that same task. Also what the relaying gateway's tasks were doing at the kill.
import path from 'node:path';
import Database from 'better-sqlite3';

/**
 * A relaying task as stored: `upstream` is the saved reference of its generation (G86); `upload`:
 * it relays an uploaded asset (as a signed URL, G92).
 * @typedef {{ id: string, status: string, upstream: { generation: number, ref?: { id: string } } | null, upload: boolean }} RelayingTask
 */

/**
 * The tasks of the gateway whose data directory is `dataDir` (read only; the process may be dead).
 * @param {string} dataDir
 * @returns {RelayingTask[]}
 */
export function readRelayingTasks(dataDir) {
  const db = new Database(path.join(dataDir, 'mediagate.db'), { readonly: true });
  try {
    const rows = /** @type {{ id: string, status: string, upstream: string | null, upload: number }[]} */ (
      db.prepare(`SELECT id, status, upstream, request LIKE '%assetId://%' AS upload FROM tasks`).all()
    );
    return rows.map((r) => ({ id: r.id, status: r.status, upstream: r.upstream === null ? null : JSON.parse(r.upstream), upload: r.upload === 1 }));
  } finally {
    db.close();
  }
}

/**
 * The upstream's tasks by the Idempotency-Key that created them (`<keyId>:<claimedAt>:<key>`,
 * store/types.ts idempotencyTaskKey), and its stored create answers by key.
 * @param {string} dataDir
 */
function readUpstream(dataDir) {
  const db = new Database(path.join(dataDir, 'mediagate.db'), { readonly: true });
  try {
    const tasks = /** @type {{ id: string, status: string, idempotency_key: string | null, created_at: number }[]} */ (
      db.prepare('SELECT id, status, idempotency_key, created_at FROM tasks').all()
    );
    const records = /** @type {{ idem_key: string, response: string | null }[]} */ (db.prepare('SELECT idem_key, response FROM idempotency_keys').all());
    /** @type {Map<string, string | undefined>} */
    const answered = new Map();
    for (const r of records) {
      /** @type {{ id?: string, data?: { projectId?: string } } | null} */
      const json = r.response === null ? null : JSON.parse(r.response);
      answered.set(r.idem_key, json?.id ?? json?.data?.projectId);
    }
    return { tasks: tasks.map((t) => ({ ...t, key: t.idempotency_key?.split(':').slice(2).join(':') })), answered };
  } finally {
    db.close();
  }
}

/** The relaying task id of an Idempotency-Key: `<task id>` or `<task id>.<generation>`. */
const taskOfKey = (/** @type {string} */ key) => key.replace(/\.\d+$/, '');

/**
 * Checks every relaying task against the upstream. `atKill`: the relaying tasks as they were when
 * the process was killed; `restartedAt`: when the second relaying process was started (a create
 * the upstream took before it came from the killed one).
 * @param {{ relayingDir: string, upstreamDir: string, accepted: Iterable<string>, atKill: RelayingTask[], restartedAt: number }} input
 */
export function checkRelayed({ relayingDir, upstreamDir, accepted, atKill, restartedAt }) {
  const relaying = readRelayingTasks(relayingDir);
  const upstream = readUpstream(upstreamDir);
  const relayingIds = new Set(relaying.map((t) => t.id));
  /** Relaying task id -> the upstream tasks created under its keys. */
  const byTask = new Map();
  const orphans = [];
  for (const t of upstream.tasks) {
    const of = t.key === undefined ? undefined : taskOfKey(t.key);
    if (of === undefined || !relayingIds.has(of)) {
      orphans.push(t.id);
      continue;
    }
    byTask.set(of, [...(byTask.get(of) ?? []), t]);
  }
  const upstreamById = new Map(upstream.tasks.map((t) => [t.id, t]));
  const v = {
    /** Accepted by a 200 but not in the relaying database. */
    acceptedMissing: [...accepted].filter((id) => !relayingIds.has(id)),
    notCompleted: relaying.filter((t) => t.status !== 'completed').map((t) => `${t.id}:${t.status}`),
    /** Relaying tasks that made two or more upstream tasks. */
    twoUpstreamTasks: relaying.filter((t) => (byTask.get(t.id)?.length ?? 0) > 1).map((t) => t.id),
    noUpstreamTask: relaying.filter((t) => !byTask.has(t.id)).map((t) => t.id),
    /** The saved reference names no upstream task, or one another key created. */
    refNotItsTask: relaying
      .filter((t) => {
        const ref = t.upstream?.ref?.id;
        const at = ref === undefined ? undefined : upstreamById.get(ref);
        return at?.key === undefined || taskOfKey(at.key) !== t.id;
      })
      .map((t) => t.id),
    /** The upstream's stored answer to the task's key is not the task its reference names. */
    recordNotItsTask: relaying
      .filter((t) => {
        const key = t.upstream?.generation ? `${t.id}.${t.upstream.generation}` : t.id;
        return upstream.answered.get(key) !== t.upstream?.ref?.id;
      })
      .map((t) => t.id),
    upstreamNotCompleted: upstream.tasks.filter((t) => t.status !== 'completed').map((t) => `${t.id}:${t.status}`),
    /** Upstream tasks no relaying task's key made. */
    orphanUpstreamTasks: orphans,
    /** A generation failed and a new one was made: nothing in this burst should fail. */
    newGenerations: relaying.filter((t) => (t.upstream?.generation ?? 0) > 0).map((t) => t.id),
  };
  const violations = Object.fromEntries(
    Object.entries(v)
      .filter(([, ids]) => ids.length > 0)
      .map(([k, ids]) => [k, { count: ids.length, some: ids.slice(0, 5) }]),
  );
  const cut = atKill.filter((t) => !t.upstream?.ref && (byTask.get(t.id) ?? []).some((/** @type {{ created_at: number }} */ u) => u.created_at < restartedAt));
  const finished = (/** @type {string} */ s) => s === 'completed' || s === 'failed' || s === 'cancelled';
  const stats = {
    relayingTasks: relaying.length,
    upstreamTasks: upstream.tasks.length,
    /** At the kill: waiting to be created upstream, being created (leased, no reference yet), started there (being checked). */
    queuedAtKill: atKill.filter((t) => t.status === 'queued').length,
    startingAtKill: atKill.filter((t) => t.status === 'processing' && !t.upstream?.ref).length,
    checkingAtKill: atKill.filter((t) => !finished(t.status) && t.upstream?.ref).length,
    completedAtKill: atKill.filter((t) => t.status === 'completed').length,
    /** Creates the upstream took from the killed process whose reference it never saved (G86's window): repeated after the restart. */
    createsCutByKill: cut.length,
    /** ... of them, those relaying an upload: the repeat carried the same signed URL (G95), or it would be another generation. */
    uploadCreatesCutByKill: cut.filter((t) => t.upload).length,
  };
  return { violations, stats };
}
