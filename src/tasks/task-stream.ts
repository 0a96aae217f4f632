/**
 * Status streams (`GET /v1/tasks/{id}/events`, G219-G220): subscribers of one task are told each
 * new state of it (status or progress), in order. A sibling of the long-poll waiters (TaskWatch),
 * on the same news: this process's writes and, in a shared store, other processes' writes come
 * through `watchChanges`; where the store has `changedElsewhere` (SQLite shared by processes) one
 * shared check (ElsewhereChanges, with the long-poll waiters) runs while anyone streams. A change is read once for all of its
 * task's subscribers; reads of one task never overlap (a change during a read reads again after
 * it), so states arrive in the order they were written. The long-poll path is untouched.
 *
 * Streams are bounded in all (this process) and per key, with the long-polls' per-key number but
 * counted apart from them: here, and across processes where the store counts slots (G197, under
 * `stream:<key id>`): a stream holds a slot that it renews every `slotMs / 2` (a slot of a process
 * that died ends `slotMs` later).
 */
import type { TaskRecord, TaskStore, WaitSlots } from '../store/types.js';
import { ElsewhereChanges } from './elsewhere.js';

export interface TaskStreamsOptions {
  pollMs?: number;
  maxStreams?: number;
  maxStreamsPerKey?: number;
  slots?: WaitSlots;
  /** How long a cross-process slot lasts unrenewed, ms. */
  slotMs?: number;
  /** A `: ping` comment after this long without an event, ms (default 15 s). */
  heartbeatMs?: number;
  /** The process's one look at other processes' writes, shared with the long-poll waiters (default: one of its own, every `pollMs`). */
  elsewhere?: ElsewhereChanges;
}

interface Subscriber {
  taskId: string;
  keyId: string;
  /** Told each state read after a change; undefined when the task is gone. */
  onTask: (task: TaskRecord | undefined) => void;
}

/** An open subscription; `close()` frees everything it holds (safe to call twice). */
export interface TaskSubscription {
  close(): void;
}

/**
 * Why a stream was not opened: this process has its most streams, the key has its most (here or,
 * counted by the store, across processes), or the store could not count the key's slots.
 */
export interface StreamRefusal {
  refused: 'process' | 'key' | 'store';
}

export class TaskStreams {
  private readonly byTask = new Map<string, Set<Subscriber>>();
  private readonly perKey = new Map<string, number>();
  private count = 0;
  private opening = 0;
  /** Tasks being read now, and those changed again meanwhile. */
  private readonly reading = new Set<string>();
  private readonly again = new Set<string>();
  private stopElsewhere: (() => void) | undefined;
  private readonly elsewhere: ElsewhereChanges;
  private readonly unsubscribe: () => void;
  private readonly pollMs: number;
  private readonly maxStreams: number;
  private readonly maxStreamsPerKey: number;
  private readonly slotMs: number;
  /** A `: ping` comment after this long without an event, ms. */
  readonly heartbeatMs: number;

  constructor(
    private readonly store: TaskStore,
    private readonly options: TaskStreamsOptions = {},
  ) {
    this.pollMs = options.pollMs ?? 250;
    this.elsewhere = options.elsewhere ?? new ElsewhereChanges(store, this.pollMs);
    this.maxStreams = options.maxStreams ?? 10_000;
    this.maxStreamsPerKey = options.maxStreamsPerKey ?? 100;
    this.slotMs = options.slotMs ?? 60_000;
    this.heartbeatMs = options.heartbeatMs ?? 15_000;
    this.unsubscribe = store.watchChanges((id) => this.changed(id));
  }

  /** Streams open now. */
  get size(): number {
    return this.count;
  }

  /** How many streams this process serves at most. */
  get processBound(): number {
    return this.maxStreams;
  }

  /** How many streams one key may have open. */
  get perKeyBound(): number {
    return this.maxStreamsPerKey;
  }

  /** Streams of one key open in this process now. */
  openFor(keyId: string): number {
    return this.perKey.get(keyId) ?? 0;
  }

  /**
   * Subscribes to task `taskId` of key `keyId`; a refusal saying which bound stopped it. After
   * subscribing the task is read once, so a change made while the stream opened is not missed.
   */
  async subscribe(taskId: string, keyId: string, onTask: (task: TaskRecord | undefined) => void): Promise<TaskSubscription | StreamRefusal> {
    if (this.count + this.opening >= this.maxStreams) return { refused: 'process' };
    if (this.openFor(keyId) >= this.maxStreamsPerKey) return { refused: 'key' };
    let slot: (() => void) | undefined;
    const slots = this.options.slots;
    const slotKey = `stream:${keyId}`; // counted apart from the key's long-poll slots
    if (slots) {
      this.opening++;
      try {
        slot = await slots.take(slotKey, this.maxStreamsPerKey, Date.now() + this.slotMs);
        if (!slot) return { refused: 'key' }; // the key's streams in other processes fill its bound
      } catch {
        return { refused: 'store' }; // the store cannot count slots now: refuse rather than stream unbounded
      } finally {
        this.opening--;
      }
    }
    const sub: Subscriber = { taskId, keyId, onTask };
    let set = this.byTask.get(taskId);
    if (!set) {
      set = new Set();
      this.byTask.set(taskId, set);
    }
    set.add(sub);
    this.perKey.set(keyId, this.openFor(keyId) + 1);
    this.count++;
    this.stopElsewhere ??= this.elsewhere.observe(() => this.pollElsewhere());
    let closed = false;
    // Renewing takes a new slot before dropping the old one: counted against max + 1, since this stream's own slot is among those counted.
    const renewer =
      slots &&
      setInterval(() => {
        slots.take(slotKey, this.maxStreamsPerKey + 1, Date.now() + this.slotMs).then(
          (fresh) => {
            if (!fresh) return; // keep the old slot until it lapses; the stream was admitted
            if (closed) {
              fresh();
              return;
            }
            slot?.();
            slot = fresh;
          },
          () => undefined,
        );
      }, this.slotMs / 2);
    renewer?.unref();
    this.changed(taskId);
    return {
      close: () => {
        if (closed) return;
        closed = true;
        if (renewer) clearInterval(renewer);
        slot?.();
        this.remove(sub);
      },
    };
  }

  close(): void {
    this.unsubscribe();
    this.stopElsewhere?.();
    this.stopElsewhere = undefined;
  }

  /** Task `id` may have changed: read it (once for all its subscribers) unless a read is under way, then again after it. */
  private changed(id: string): void {
    if (!this.byTask.has(id)) return;
    if (this.reading.has(id)) {
      this.again.add(id);
      return;
    }
    this.reading.add(id);
    void this.store
      .get(id)
      .then(
        (task) => task,
        () => null,
      )
      .then((task) => {
        if (task !== null) for (const sub of [...(this.byTask.get(id) ?? [])]) sub.onTask(task);
        this.reading.delete(id);
        if (task === null)
          setTimeout(() => this.changed(id), this.pollMs).unref(); // the store could not answer: read again shortly
        else if (this.again.delete(id)) this.changed(id);
      });
  }

  private pollElsewhere(): void {
    for (const id of [...this.byTask.keys()]) this.changed(id);
  }

  private remove(sub: Subscriber): void {
    const set = this.byTask.get(sub.taskId);
    if (!set?.delete(sub)) return;
    if (set.size === 0) {
      this.byTask.delete(sub.taskId);
      this.again.delete(sub.taskId);
    }
    const n = this.openFor(sub.keyId) - 1;
    if (n <= 0) this.perKey.delete(sub.keyId);
    else this.perKey.set(sub.keyId, n);
    this.count--;
    if (this.count === 0 && this.stopElsewhere) {
      this.stopElsewhere();
      this.stopElsewhere = undefined;
    }
  }
}
