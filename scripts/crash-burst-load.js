// The load of scripts/crash-burst.js: the create calls of every family (the burst), submitted at a
// fixed concurrency, each accepted task recorded (id -> request index); then the accepted tasks
// long-polled until each is finished (or lost, or the deadline passes).

/**
 * One kind of create call: the route and the body of request `i`.
 * @typedef {[string, (i: number) => object]} Kind
 */

/** @type {Kind[]} */
const PIC = Array(20).fill(['/v1/pic/images', (/** @type {number} */ i) => ({ model: 'pic', prompt: `burst ${i}` })]);

/**
 * One create call per family; pic weighs most (cheap), every video family is in the mix. The burst
 * is about records (each task completed once across the kill), not pixels: a video costs the
 * sandbox about 0.6 s of CPU against a picture's tenth of that, so 20 pictures per five videos
 * (G473; at 6 per five, 120 tasks took 42 s of CPU instead of 25).
 */
export const KINDS = /** @type {Kind[]} */ ([
  ...PIC,
  ['/reel/videos', (i) => ({ model: 'reelOa2Plus', prompt: `burst ${i}`, duration: 4 })],
  ['/v1/motion/videos', (i) => ({ model: 'motion_2_0_4s_5s', content: [{ type: 'text', text: `burst ${i}` }], duration: 1 })],
  ['/v1/videos/videos', (i) => ({ model: 'videos_fast', prompt: `burst ${i}`, duration: 4 })],
  ['/v2/model-center/tasks', (i) => ({ model: 'sd_2.0_fast_discount', prompt: `burst ${i}`, duration: 4, resolution: '480p', generate_audio: false })],
  ['/clip/videos', (i) => ({ model: 'clip_3_1_fast', prompt: `burst ${i}` })],
]);

/**
 * Every family and both forms of clip and reel (each form goes to its own upstream endpoint when
 * relayed), the shortest videos each model takes, each video after nine pictures: a burst of 200
 * fits 2 cores (each video is rendered at the upstream, then downloaded and probed by the relay;
 * after four pictures each, the same burst took 55 s of CPU instead of 47: G473).
 */
export const KINDS_BOTH_FORMS = /** @type {Kind[]} */ (
  [
    ...KINDS.slice(PIC.length),
    ['/clip/videos', (/** @type {number} */ i) => ({ model: 'clip3.1-fast', prompt: `burst ${i}` })],
    ['/reel/videos', (/** @type {number} */ i) => ({ model: 'reel-2', prompt: `burst ${i}`, duration: 10 })],
  ].flatMap((video) => [...PIC.slice(0, 9), video])
);

/**
 * The fields of a create or result reply the script reads: `id` (most families) or
 * `data.projectId` (model-center) on create, `status` on result.
 * @typedef {{ id?: string, status?: string, data?: { projectId?: string } }} TaskReply
 */

/** @param {TaskReply | null} json */
const idOf = (json) => json?.id ?? json?.data?.projectId;

/**
 * Calls of one API key, and the tasks they got accepted.
 * @param {{ key: string, concurrency: number, kinds: Kind[] }} options
 */
export function burstClient({ key, concurrency, kinds }) {
  /** Accepted task id -> the index of the request that created it. @type {Map<string, number>} */
  const accepted = new Map();

  /**
   * @param {string} url
   * @param {string} [method]
   * @param {object} [body]
   * @returns {Promise<{ status: number, json: TaskReply | null }>}
   */
  async function call(url, method = 'GET', body) {
    const res = await fetch(url, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body && { 'content-type': 'application/json' }) },
      ...(body && { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(90_000),
    });
    return { status: res.status, json: /** @type {TaskReply | null} */ (await res.json().catch(() => null)) };
  }

  /**
   * Submits the requests `indexes` at `concurrency`; records the accepted ones. Returns how many
   * were refused or cut off (a server killed under a request: not accepted). `onAccepted` may hold
   * the submitter that got the answer (until the promise it returns settles).
   * @param {string} base
   * @param {number[]} indexes
   * @param {() => void | Promise<void>} [onAccepted]
   */
  async function submitAll(base, indexes, onAccepted) {
    let next = 0;
    let failed = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < indexes.length) {
          const i = /** @type {number} */ (indexes[next++]); // next < indexes.length
          const [route, body] = /** @type {Kind} */ (kinds[i % kinds.length]);
          try {
            const r = await call(`${base}${route}`, 'POST', body(i));
            const id = idOf(r.json);
            if (r.status === 200 && id) {
              accepted.set(id, i);
              await onAccepted?.();
            } else failed++;
          } catch {
            failed++;
          }
        }
      }),
    );
    return failed;
  }

  /**
   * Long-polls every accepted task until it is finished or `deadline` (Unix ms) passes: the final
   * status of each (`lost`: answered 404), and the ids still pending.
   * @param {string} base
   * @param {number} deadline
   */
  async function waitFinished(base, deadline) {
    const pending = new Set(accepted.keys());
    /** @type {Map<string, string>} */
    const finals = new Map();
    while (pending.size > 0 && Date.now() < deadline) {
      await Promise.all(
        [...pending].slice(0, 50).map(async (id) => {
          const r = await call(`${base}/v1/result/${id}?wait=10`);
          if (r.status === 404) {
            finals.set(id, 'lost');
            pending.delete(id);
            return;
          }
          const status = r.json?.status;
          if (status === 'completed' || status === 'failed' || status === 'cancelled') {
            finals.set(id, status);
            pending.delete(id);
          }
        }),
      );
    }
    /** @type {Record<string, number>} */
    const counts = {};
    for (const s of finals.values()) counts[s] = (counts[s] ?? 0) + 1;
    return { finals, counts, pending };
  }

  return { accepted, submitAll, waitFinished };
}

/**
 * How many more times tasks were logged completed than there are tasks (0: none completed twice).
 * @param {string[]} completedIds
 */
export const completedTwice = (completedIds) => completedIds.length - new Set(completedIds).size;
