// What bench/fake-upstream.js counts per task, and the summary its `GET /__stats` answers: how
// many creates (and repeats of one Idempotency-Key), how often and how regularly each task was
// queried, and how long after a task finished the first query saw it finished.

/**
 * One task of the fake upstream, with its counters. Times are milliseconds on the process's
 * monotonic clock (performance.now()).
 * @typedef {object} FakeTask
 * @property {string} id
 * @property {'motion' | 'videos' | 'clip'} family
 * @property {'video' | 'video.generation'} object
 * @property {string} model
 * @property {string} route the create path (the same key on another path is a conflict)
 * @property {number} createdUnix Unix seconds, for `created`
 * @property {number} createdMs
 * @property {number} finishMs when it completes (or fails, with `[fail]` in the prompt)
 * @property {boolean} fails
 * @property {boolean} cancelled
 * @property {number} creates create calls answered with this task (1 + repeats of its key)
 * @property {number[]} queryMs when each query came
 * @property {number | undefined} seenFinishedMs when the first query came that saw it finished
 * @property {number} downloads
 */

/**
 * Counters that are not per task.
 * @typedef {object} FakeUpstreamCounters
 * @property {number} creates every create answered with a task (repeats included)
 * @property {number} duplicateCreates creates answered with an existing task (same Idempotency-Key)
 * @property {number} conflicts 409: a key used again on another create path
 * @property {number} rejected 400 and 401 answers
 * @property {number} unknownQueries queries of ids it never made (404)
 * @property {number} cancels
 */

/**
 * @typedef {{ count: number, min: number | null, p50: number | null, p99: number | null, max: number | null }} Distribution
 */

/**
 * Nearest-rank percentiles of `values` (null when there are none).
 * @param {number[]} values
 * @returns {Distribution}
 */
export function distribution(values) {
  const sorted = [...values].sort((a, b) => a - b);
  /** @param {number} p */
  const rank = (p) => (sorted.length === 0 ? null : (sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? null));
  return { count: sorted.length, min: sorted[0] ?? null, p50: rank(50), p99: rank(99), max: sorted.at(-1) ?? null };
}

/** @param {number} ms */
const round = (ms) => Math.round(ms * 10) / 10;

/**
 * One task's counters as `GET /__stats?tasks=1` lists them: query times relative to its finish
 * time (negative: before it finished).
 * @param {FakeTask} t
 */
export function taskStats(t) {
  return {
    id: t.id,
    family: t.family,
    model: t.model,
    creates: t.creates,
    downloads: t.downloads,
    queriesFromFinishMs: t.queryMs.map((q) => round(q - t.finishMs)),
    seenFinishedAfterMs: t.seenFinishedMs === undefined ? null : round(t.seenFinishedMs - t.finishMs),
  };
}

/**
 * The summary `GET /__stats` answers.
 * @param {Iterable<FakeTask>} tasks
 * @param {FakeUpstreamCounters} counters
 * @param {number} nowMs
 * @param {number} finishAfterMs the configured time from create to finish
 */
export function upstreamStats(tasks, counters, nowMs, finishAfterMs) {
  let count = 0;
  let finished = 0;
  let cancelled = 0;
  let repeated = 0;
  let beforeFinish = 0;
  let afterFinish = 0;
  let downloads = 0;
  let unseen = 0;
  /** @type {number[]} */ const perTask = [];
  /** @type {number[]} */ const intervals = [];
  /** @type {number[]} */ const seenDelays = [];
  for (const t of tasks) {
    count++;
    if (t.cancelled) cancelled++;
    else if (nowMs >= t.finishMs) finished++;
    if (t.creates > 1) repeated++;
    downloads += t.downloads;
    perTask.push(t.queryMs.length);
    for (let i = 0; i < t.queryMs.length; i++) {
      const q = /** @type {number} */ (t.queryMs[i]);
      if (q < t.finishMs) beforeFinish++;
      else afterFinish++;
      if (i > 0) intervals.push(round(q - /** @type {number} */ (t.queryMs[i - 1])));
    }
    if (t.seenFinishedMs !== undefined) seenDelays.push(round(t.seenFinishedMs - t.finishMs));
    else if (!t.cancelled && nowMs >= t.finishMs) unseen++;
  }
  return {
    finishAfterMs,
    tasks: count,
    finished,
    cancelled,
    creates: counters.creates,
    duplicateCreates: counters.duplicateCreates,
    tasksCreatedMoreThanOnce: repeated,
    conflicts: counters.conflicts,
    rejected: counters.rejected,
    cancels: counters.cancels,
    queries: {
      total: beforeFinish + afterFinish,
      beforeFinish,
      afterFinish,
      unknownIds: counters.unknownQueries,
      perTask: distribution(perTask),
      /** Time between one query of a task and its next. */
      intervalMs: distribution(intervals),
    },
    /** From a task's finish to the first query that saw it finished; `unseen`: finished, never seen so. */
    finishSeen: { ...distribution(seenDelays), unseen },
    downloads,
  };
}
