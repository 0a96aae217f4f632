/**
 * This process's scratch folder: `<data>/tmp/<pid>-<random>` (G163). Several processes may share one
 * data directory (an API and a worker process on one machine), so none may empty `tmp/` at start:
 * each removes only the folders of processes that are gone (their pid is not alive on this machine)
 * and anything not named so (left by older versions), and its own folder when it stops.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

const PROCESS_FOLDER = /^(\d+)-[0-9a-f]+$/;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'; // alive, another user's
  }
}

/** Removes what stopped processes left in `root`, and makes this process's own folder there. */
export function openScratchDir(root: string): { dir: string; remove(): void } {
  fs.mkdirSync(root, { recursive: true });
  for (const name of fs.readdirSync(root)) {
    const pid = PROCESS_FOLDER.exec(name)?.[1];
    if (pid !== undefined && alive(Number(pid))) continue;
    fs.rmSync(path.join(root, name), { recursive: true, force: true });
  }
  const dir = path.join(root, `${process.pid}-${randomBytes(4).toString('hex')}`);
  fs.mkdirSync(dir);
  return { dir, remove: () => fs.rmSync(dir, { recursive: true, force: true }) };
}
