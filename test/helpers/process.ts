import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const BIN = path.join(ROOT, 'bin', 'mediagate.js');

/**
 * dist/ built and current, so process tests start quickly afterwards: done once for the whole run
 * by the global setup (run-setup.ts, build-once.ts); without it (MEDIAGATE_TEST_NO_BUILD=1 with
 * a process test in the run) built here, if stale, as the launcher does.
 */
export function ensureBuilt(): void {
  if (process.env.MEDIAGATE_TEST_DIST_BUILT === '1') return;
  const r = spawnSync(process.execPath, [BIN, 'build'], { cwd: ROOT, encoding: 'utf8', timeout: 180_000 });
  if (r.status !== 0) throw new Error(`build failed: ${r.stderr}`);
}

export function runCli(args: string[], env: Record<string, string>): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, ...env }, timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** {@link runCli} without blocking this process: for commands that talk to servers the test itself runs (an S3 server). */
export function runCliAsync(args: string[], env: Record<string, string>): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return runCollecting(process.execPath, [BIN, ...args], env, ROOT);
}

/** Runs `file` (this environment plus `env`, in `cwd`) to its end without blocking, collecting its output; killed after 60 s. */
export function runCollecting(
  file: string,
  args: string[],
  env: Record<string, string>,
  cwd: string,
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const child = spawn(file, args, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000 });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

export interface ServerProcess {
  child: ChildProcess;
  url: string;
  /** Everything the process wrote so far. */
  output(): string;
  /** Its exit code once it has ended and its output has been read to the end. */
  exited: Promise<number | null>;
}

/** Starts `mediagate serve [args]` on a free port and resolves once it logs that it listens. */
export async function startServerProcess(env: Record<string, string>, args: string[] = []): Promise<ServerProcess> {
  const child = spawn(process.execPath, [BIN, 'serve', ...args], {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', MEDIAGATE_MIN_FREE_DISK_MB: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  // 'close', not 'exit': the process has ended and everything it wrote has been read (a log line
  // written just before the end may still be in the pipe at 'exit')
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL'); // a start that hangs leaves no process behind
      reject(new Error(`server did not start:\n${out}`));
    }, 60_000);
    const onData = (chunk: Buffer): void => {
      out += chunk.toString();
      const m = /"address":"(http:\/\/[^"]+)"/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}:\n${out}`));
    });
  });
  return { child, url, output: () => out, exited };
}
