/**
 * What the gateway itself needs to run tasks: free disk under its data directory and free file
 * descriptors. `/readyz` reports a shortage (503 naming it) and the worker claims nothing while
 * one lasts, so tasks wait in the queue instead of failing for the gateway's own fault (G84).
 */
import fs from 'node:fs';

export interface ResourceState {
  /** True when nothing is short. */
  ok: boolean;
  /** What is short, in words an operator can act on. */
  problems: string[];
}

export interface ResourceProbes {
  /** Bytes free for this process on the file system of `dir`. */
  freeDiskBytes(dir: string): number;
  /** Open file descriptors of this process and its limit, or undefined where that cannot be read. */
  openFiles(): { open: number; limit: number } | undefined;
}

/** The soft limit on open files (`ulimit -n`) from /proc; undefined off Linux. */
export function openFileLimit(): number | undefined {
  try {
    const line = fs
      .readFileSync('/proc/self/limits', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('Max open files'));
    const soft = line?.split(/\s{2,}/)[1];
    return soft === undefined || soft === 'unlimited' ? undefined : Number(soft);
  } catch {
    return undefined;
  }
}

export const systemProbes: ResourceProbes = {
  freeDiskBytes: (dir) => {
    const s = fs.statfsSync(dir);
    return s.bavail * s.bsize;
  },
  openFiles: () => {
    const limit = openFileLimit();
    if (limit === undefined) return undefined;
    try {
      return { open: fs.readdirSync('/proc/self/fd').length, limit };
    } catch {
      return undefined;
    }
  },
};

/** Share of the descriptor limit in use from which descriptors count as short. */
const FD_SHORT_FRACTION = 0.9;

export class ResourceMonitor {
  private cached: { at: number; state: ResourceState } | undefined;

  /**
   * `minFreeDiskBytes` 0 turns the disk check off. The state is worked out at most once per
   * `cacheMs` (readyz and every worker fill ask).
   */
  constructor(
    private readonly dataDir: string,
    private readonly minFreeDiskBytes: number,
    private readonly probes: ResourceProbes = systemProbes,
    private readonly cacheMs = 1000,
    private readonly now: () => number = Date.now,
  ) {}

  check(): ResourceState {
    const at = this.now();
    if (this.cached && at - this.cached.at < this.cacheMs) return this.cached.state;
    const problems: string[] = [];
    if (this.minFreeDiskBytes > 0) {
      try {
        const free = this.probes.freeDiskBytes(this.dataDir);
        if (free < this.minFreeDiskBytes) {
          problems.push(`disk: ${mib(free)} MiB free under the data directory, less than MEDIAGATE_MIN_FREE_DISK_MB (${mib(this.minFreeDiskBytes)} MiB)`);
        }
      } catch (err) {
        problems.push(`disk: the free space under the data directory cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
      }
    }
    const files = this.probes.openFiles();
    if (files && files.open >= files.limit * FD_SHORT_FRACTION) {
      problems.push(`file descriptors: ${files.open} open of a limit of ${files.limit} (ulimit -n); lower MEDIAGATE_MAX_CONNECTIONS or raise the limit`);
    }
    const state = { ok: problems.length === 0, problems };
    this.cached = { at, state };
    return state;
  }
}

const mib = (bytes: number): number => Math.floor(bytes / 1_048_576);
