/**
 * Part of the run's global setup (run-setup.ts): at the end of a run, the processes it started
 * and did not stop are stopped. A process test that times out or fails before its cleanup can leave
 * the gateways, CLIs or servers it spawned running (one session found two gateways still serving
 * 38 minutes after their run). Every process a run starts inherits the run's own TMPDIR
 * (temp-root.ts), or a folder inside it (the provider contract's runs), so a process whose
 * environment holds it belongs to the run; on Linux (/proc) each
 * one found is sent SIGKILL, and the run says which. The vitest processes themselves are left to
 * vitest. Test-only.
 */
import fs from 'node:fs';

export interface Leftover {
  pid: number;
  command: string;
}

function read(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'latin1');
  } catch {
    return undefined; // ended meanwhile, or another user's
  }
}

/** The processes whose TMPDIR is `root` or a folder inside it, but this one and vitest's own. */
export function leftoverProcesses(root: string): Leftover[] {
  if (!fs.existsSync('/proc/self/environ')) return [];
  const marker = `TMPDIR=${root}`;
  const ours = (v: string): boolean => v === marker || v.startsWith(`${marker}/`);
  const found: Leftover[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(entry)) continue;
    const pid = Number(entry);
    if (pid === process.pid) continue;
    const environ = read(`/proc/${pid}/environ`);
    if (!environ?.split('\0').some(ours)) continue;
    const command = (read(`/proc/${pid}/cmdline`) ?? '').split('\0').join(' ').trim();
    if (/node_modules[\\/](vitest|tinypool)[\\/]/.test(command)) continue;
    found.push({ pid, command });
  }
  return found;
}

/** Sends SIGKILL to each of {@link leftoverProcesses}; answers what it stopped. */
export function stopLeftoverProcesses(root: string): Leftover[] {
  const found = leftoverProcesses(root);
  for (const p of found) {
    try {
      process.kill(p.pid, 'SIGKILL');
    } catch {
      // it ended meanwhile
    }
  }
  return found;
}
