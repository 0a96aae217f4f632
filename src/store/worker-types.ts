/** Heartbeats of the processes that run tasks (G264). Part of the store contract (types.ts). */
/** One process that runs tasks, as its heartbeat row says (G264). */
export interface WorkerBeat {
  /** The runner's worker id (`<host>:<pid>:<random>`): a lease owner's id. */
  id: string;
  /** The process's role (`worker`, or `all` for a process that also answers the API). */
  role: string;
}

/**
 * Heartbeats of the processes that run tasks (G264): each writes its row every few seconds, so any
 * process can say how many are alive (a row seen recently) per role, for `/metrics`.
 */
export interface WorkerStore {
  /** Writes (or refreshes) the worker's row as seen at `now`; rows not seen since `forgetBefore` are removed. */
  beat(worker: WorkerBeat, now: number, forgetBefore: number): Promise<void>;
  /** Removes the worker's row (a graceful stop). */
  leave(id: string): Promise<void>;
  /** How many workers were seen at or after `since`, per role (roles with none are left out). */
  liveByRole(since: number): Promise<Array<{ role: string; count: number }>>;
}
