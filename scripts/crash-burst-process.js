// The mediagate processes of scripts/crash-burst.js: `mediagate serve` started as a child with its
// own environment, its output kept (the checks read its logs), its address read from its startup
// line; and a port free at this moment, for a process that must keep its address across a restart.
import { spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.dirname(path.dirname(fileURLToPath(import.meta.url)));

/**
 * A started `mediagate serve`.
 * @typedef {{ child: import('node:child_process').ChildProcess, url: Promise<string>, exited: Promise<number | string | null>, output: () => string }} ServerProcess
 */

/**
 * Starts `mediagate serve` with `env` (the whole environment); `url` resolves once it listens.
 * @param {NodeJS.ProcessEnv} env
 * @returns {ServerProcess}
 */
export function startServer(env) {
  const child = spawn(process.execPath, [path.join(ROOT, 'bin', 'mediagate.js'), 'serve'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  /** @type {Promise<number | string | null>} */
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal)));
  /** @type {Promise<string>} */
  const url = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${out}`)), 120_000);
    /** @param {Buffer} chunk */
    const onData = (chunk) => {
      out += chunk.toString();
      const m = /"address":"(http:\/\/[^"]+)"/.exec(out);
      if (m?.[1]) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`server exited (${code}):\n${out}`));
    });
  });
  // a script that stops early never leaves a server behind
  process.on('exit', () => child.kill('SIGKILL'));
  return { child, url, exited, output: () => out };
}

/**
 * A TCP port of 127.0.0.1 free at this moment (the OS picks it).
 * @returns {Promise<number>}
 */
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const address = s.address();
      if (address === null || typeof address === 'string') {
        reject(new Error('not listening on TCP'));
        return;
      }
      s.close(() => resolve(address.port));
    });
  });
}

/**
 * The task ids of the log lines of `output` with message `msg` (pino JSON lines with a `taskId`).
 * @param {string} output
 * @param {string} msg
 * @returns {string[]}
 */
export function taskIdsLogged(output, msg) {
  /** @type {string[]} */
  const ids = [];
  for (const line of output.split('\n')) {
    if (!line.includes(`"msg":"${msg}"`)) continue;
    const id = /"taskId":"([^"]+)"/.exec(line)?.[1];
    if (id) ids.push(id);
  }
  return ids;
}
