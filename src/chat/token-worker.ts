/**
 * The chat tokenizer's thread (G295): gpt-tokenizer (o200k_base, tens of MB of tables and a second to
 * load) is loaded only here, on a worker thread started by the first count, so a gateway that never
 * counts tokens never loads it and no count ever runs on the event loop. The main thread sends texts
 * and gets counts (or a reply's token groups) back.
 *
 * Counting is bounded (G82): BPE merging is quadratic in the length of one pre-token, and a run of one
 * character (100,000 x '国') is one pre-token: counted whole it takes seconds to minutes. So a run of
 * more than {@link MAX_RUN_CHARS} characters without whitespace is cut into pieces of that many and
 * each piece is encoded alone; a text without such runs is counted exactly, one with them may count
 * one token more per cut (a token the cut splits). The worker's source is inline (as the WAL
 * checkpointer's), so it runs the same from src/ under the tests and from dist/.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** The longest run of non-whitespace characters encoded as one piece. */
export const MAX_RUN_CHARS = 256;

/** A piece of a text that decodes to whole characters, and how many tokens it took. */
export interface TextPiece {
  text: string;
  tokens: number;
}

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { encode, decodeGenerator } = require(workerData.tokenizer);
const PLAIN = { disallowedSpecial: new Set() };
const MAX = workerData.maxRun;
const LONG_RUN = new RegExp('\\\\S{' + (MAX + 1) + ',}', 'gu');
function count(text) {
  if (text.length === 0) return 0;
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
// gpt-tokenizer's decode keeps a partial character of one call in a shared streaming decoder and
// prepends it to the next call's output, so partial token lists are never decoded here: the whole
// list goes through decodeGenerator (which ends on a character boundary, leaving the decoder clean)
// and the tokens it pulled are counted per piece.
function pieces(text) {
  const tokens = encode(text, PLAIN);
  for (let attempt = 0; attempt < 2; attempt++) {
    const out = [];
    let pulled = 0;
    let counted = 0;
    const counting = { *[Symbol.iterator]() { for (const t of tokens) { pulled++; yield t; } } };
    for (const piece of decodeGenerator(counting)) {
      out.push({ text: piece, tokens: pulled - counted });
      counted = pulled;
    }
    if (out.length > 0) out[out.length - 1].tokens += pulled - counted;
    // a partial character left in the shared decoder shows up as a prefix; that call flushed it
    if (out.map((p) => p.text).join('') === text) return out;
  }
  throw new Error('gpt-tokenizer did not decode its own encoding back to the same text');
}
parentPort.on('message', ({ id, texts, piecesOf }) => {
  try {
    if (piecesOf !== undefined) parentPort.postMessage({ id, result: pieces(piecesOf) });
    else parentPort.postMessage({ id, result: texts.map(count) });
  } catch (err) {
    parentPort.postMessage({ id, error: String(err && err.message || err) });
  }
});
`;

type Job = { texts: string[] } | { piecesOf: string };
interface Pending {
  resolve: (result: unknown) => void;
  reject: (err: Error) => void;
}

/** The one tokenizer thread of this process and the requests waiting on it. */
class TokenWorker {
  private worker: Worker | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;

  run<T>(job: Job): Promise<T> {
    const worker = this.start();
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (result: unknown) => void, reject });
      worker.ref(); // keep the process up while someone waits for a count
      worker.postMessage({ id, ...job });
    });
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const tokenizer = createRequire(import.meta.url).resolve('gpt-tokenizer');
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { tokenizer, maxRun: MAX_RUN_CHARS } });
    worker.unref();
    worker.on('message', (msg: { id: number; result?: unknown; error?: string }) => {
      const p = this.pending.get(msg.id);
      if (!p) return;
      this.pending.delete(msg.id);
      if (this.pending.size === 0) worker.unref();
      if (msg.error === undefined) p.resolve(msg.result);
      else p.reject(new Error(`token counting failed: ${msg.error}`));
    });
    const fail = (err: Error): void => {
      if (this.worker === worker) this.worker = undefined; // the next job starts a new one
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

/** Token counts of `texts` (in order), counted on the tokenizer thread. */
export function countOnWorker(texts: string[]): Promise<number[]> {
  return shared.run<number[]>({ texts });
}

/** `text` as the token groups a model would stream (see textPieces in tokens.ts), cut on the tokenizer thread. */
export function piecesOnWorker(text: string): Promise<TextPiece[]> {
  return shared.run<TextPiece[]>({ piecesOf: text });
}
