/**
 * Lookups asked for in one event-loop turn, answered by one query (G193). Under load a gateway
 * handles many requests per turn; on PostgreSQL each of their reads (the poll's task-by-key-hash,
 * the auth hook's key-by-hash) would otherwise be a round trip of its own over the pool: a query
 * to send, a reply to parse and a pooled connection to take and give back, the bulk of a poll's
 * CPU. The batch is sent at the end of the turn (`setImmediate`), so every lookup is still read
 * after it was asked for: a write committed before the request arrived is seen, as before.
 * Equal lookups in one batch share the answer (records are never changed in place).
 */
export class TurnBatch<K, V> {
  private pending = new Map<string, { key: K; waiters: { resolve: (v: V | undefined) => void; reject: (err: unknown) => void }[] }>();
  private scheduled = false;

  /**
   * @param idOf what makes two lookups the same one (a string)
   * @param lookUp answers a batch of distinct lookups: the answer of each key found, by its id
   * @param maxBatch at most this many lookups per query (a bigger turn is sent in several)
   */
  constructor(
    private readonly idOf: (key: K) => string,
    private readonly lookUp: (keys: K[]) => Promise<Map<string, V>>,
    private readonly maxBatch = 500,
  ) {}

  get(key: K): Promise<V | undefined> {
    return new Promise((resolve, reject) => {
      const id = this.idOf(key);
      let entry = this.pending.get(id);
      if (entry === undefined) {
        entry = { key, waiters: [] };
        this.pending.set(id, entry);
      }
      entry.waiters.push({ resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => {
          this.flush();
        });
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    const entries = [...this.pending];
    this.pending = new Map();
    for (let i = 0; i < entries.length; i += this.maxBatch) {
      const batch = entries.slice(i, i + this.maxBatch);
      this.lookUp(batch.map(([, e]) => e.key)).then(
        (found) => {
          for (const [id, e] of batch) for (const w of e.waiters) w.resolve(found.get(id));
        },
        (err: unknown) => {
          for (const [, e] of batch) for (const w of e.waiters) w.reject(err);
        },
      );
    }
  }
}
