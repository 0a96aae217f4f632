/**
 * The run's end stops what the run left running (G475): the processes whose environment holds the
 * run's TMPDIR, and no other.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { leftoverProcesses, stopLeftoverProcesses } from '../helpers/leftover-processes.js';
import { tempDir } from '../helpers/temp-root.js';

const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

/** A node process that runs until killed, with TMPDIR set to `root`; resolves once it runs. */
async function idle(root: string): Promise<{ child: ChildProcess; ended: Promise<NodeJS.Signals | null> }> {
  const child = spawn(process.execPath, ['-e', 'process.stdout.write("up"); setInterval(() => {}, 1000)'], {
    env: { ...process.env, TMPDIR: root },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  children.push(child);
  const ended = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
  await new Promise((resolve) => child.stdout!.once('data', resolve));
  return { child, ended };
}

describe.skipIf(process.platform !== 'linux')('the processes a run left running', () => {
  it('are found by the run’s TMPDIR in their environment, and stopped; another run’s are left alone', async () => {
    const mine = tempDir('mediagate-run-a-');
    fs.mkdirSync(path.join(mine, 'nested'));
    const other = tempDir('mediagate-run-b-');
    const a = await idle(mine);
    const b = await idle(other);

    const inside = await idle(path.join(mine, 'nested')); // TMPDIR a folder of the run's
    expect(
      leftoverProcesses(mine)
        .map((p) => p.pid)
        .sort(),
    ).toEqual([a.child.pid, inside.child.pid].sort());
    stopLeftoverProcesses(`${mine}/nested`);
    expect(await inside.ended).toBe('SIGKILL');
    expect(leftoverProcesses(mine).map((p) => p.pid)).toEqual([a.child.pid]);
    expect(leftoverProcesses(`${mine}-other`)).toEqual([]); // a name that merely starts like it is another folder
    expect(leftoverProcesses(mine)[0]!.command).toContain('setInterval');
    const stopped = stopLeftoverProcesses(mine);
    expect(stopped.map((p) => p.pid)).toEqual([a.child.pid]);
    expect(await a.ended).toBe('SIGKILL');
    expect(leftoverProcesses(mine)).toEqual([]);

    // the other run's process still runs
    expect(b.child.exitCode).toBeNull();
    expect(b.child.signalCode).toBeNull();
    expect(leftoverProcesses(other).map((p) => p.pid)).toEqual([b.child.pid]);
  });
});
