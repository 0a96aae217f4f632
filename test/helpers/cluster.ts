/**
 * A gateway cluster of real processes (`mediagate serve --role api|worker`, G163): each with a data
 * directory of its own (nothing shared on disk), all on one PostgreSQL database and one bucket, with
 * one signing secret and one bootstrap key. `stop()` kill -9s whatever still runs and removes the
 * data directories; it is safe to call after a failure halfway through the start.
 */
import fs from 'node:fs';
import { tempDir } from './temp-root.js';
import { startServerProcess, type ServerProcess } from './process.js';

export interface ClusterProcess extends ServerProcess {
  role: 'api' | 'worker';
  dataDir: string;
  /** The OS process id: a worker's lease owner id is `<host>:<pid>:<random>`. */
  pid: number;
}

export interface Cluster {
  apis: ClusterProcess[];
  workers: ClusterProcess[];
  /** `<host>:<pid>:` prefix test of a lease owner: whether `owner` is a runner of process `p`. */
  owns(p: ClusterProcess, owner: string | null): boolean;
  stop(): Promise<void>;
}

export async function startCluster(options: { apis: number; workers: number; env: Record<string, string> }): Promise<Cluster> {
  const all: ClusterProcess[] = [];
  const dirs: string[] = [];
  const stop = async (): Promise<void> => {
    await Promise.all(
      all.map(async (p) => {
        if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
        await p.exited;
      }),
    );
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  };
  const start = async (role: 'api' | 'worker'): Promise<ClusterProcess> => {
    const dataDir = tempDir(`mediagate-cluster-${role}-`);
    dirs.push(dataDir);
    const p = await startServerProcess({ ...options.env, MEDIAGATE_DATA_DIR: dataDir }, ['--role', role]);
    const member = { ...p, role, dataDir, pid: p.child.pid! };
    all.push(member);
    return member;
  };
  try {
    // all at once: they migrate the empty database and store the bootstrap key concurrently
    const roles = [...Array<'api'>(options.apis).fill('api'), ...Array<'worker'>(options.workers).fill('worker')];
    const started = await Promise.allSettled(roles.map((role) => start(role)));
    const failed = started.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    apis: all.filter((p) => p.role === 'api'),
    workers: all.filter((p) => p.role === 'worker'),
    owns: (p, owner) => owner !== null && owner.split(':').at(-2) === String(p.pid),
    stop,
  };
}
