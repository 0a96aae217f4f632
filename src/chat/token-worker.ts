/**
 * Token counting off the event loop: one worker thread, started when first needed, counts the texts
 * it is sent in pieces of bounded cost. BPE merging is quadratic in the length of one pre-token, and
 * a run of one character (100,000 x '国') is one pre-token: counted whole it takes seconds to minutes.
 * So a run of more than {@link MAX_RUN_CHARS} characters without whitespace is cut into pieces of that
 * many and each piece is encoded alone; a text without such runs is counted exactly, one with them
 * may count one token more per cut (a token the cut splits). The worker's source is inline (as the
 * WAL checkpointer's), so it runs the same from src/ under the tests and from dist/.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** The longest run of non-whitespace characters encoded as one piece. */
export const MAX_RUN_CHARS = 256;

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { encode } = require(workerData.tokenizer);
const PLAIN = { disallowedSpecial: new Set() };
const MAX = workerData.maxRun;
const LONG_RUN = new RegExp('\\\\S{' + (MAX + 1) + ',}', 'gu');
function count(text) {
  let total = 0;
  let from = 0;
  LONG_RUN.lastIndex = 0;
  for (let m = LONG_RUN.exec(text); m !== null; m = LONG_RUN.exec(text)) {
    // the text before the run and the run's first piece go together; the rest in pieces of MAX
    let at = m.index;
    const end = m.index + m[0].length;
    while (end - at > MAX) {
      let cut = at + MAX;
      const c = text.charCodeAt(cut);
      if (c >= 0xdc00 && c <= 0xdfff) cut--; // never between the halves of a surrogate pair
      total += encode(text.slice(from, cut), PLAIN).length;
      from = cut;
      at = cut;
    }
  }
  if (from < text.length) total += encode(text.slice(from), PLAIN).length;
  return total;
}
parentPort.on('message', ({ id, texts }) => {
  try {
    parentPort.postMessage({ id, counts: texts.map(count) });
  } catch (err) {
    parentPort.postMessage({ id, error: String(err && err.message || err) });
  }
});
`;

interface Pending { resolve: (counts: number[]) => void; reject: (err: Error) => void }

/** The one counting thread of this process and the requests waiting on it. */
class TokenWorker {
  private worker: Worker | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;

  count(texts: string[]): Promise<number[]> {
    const worker = this.start();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.ref(); // keep the process up while someone waits for a count
      worker.postMessage({ id, texts });
    });
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const tokenizer = createRequire(import.meta.url).resolve('gpt-tokenizer');
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { tokenizer, maxRun: MAX_RUN_CHARS } });
    worker.unref();
    worker.on('message', (msg: { id: number; counts?: number[]; error?: string }) => {
      const p = this.pending.get(msg.id);
      if (!p) return;
      this.pending.delete(msg.id);
      if (this.pending.size === 0) worker.unref();
      if (msg.counts) p.resolve(msg.counts);
      else p.reject(new Error(`token counting failed: ${msg.error ?? 'unknown error'}`));
    });
    const fail = (err: Error): void => {
      if (this.worker === worker) this.worker = undefined; // the next count starts a new one
      for (const p of this.pending.values()) p.reject(err);
      this.pending.clear();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`the token counting thread exited (${code})`)));
    this.worker = worker;
    return worker;
  }
}

const shared = new TokenWorker();

/** Token counts of `texts` (in order), counted on the worker thread. */
export function countOnWorker(texts: string[]): Promise<number[]> {
  return shared.count(texts);
}
