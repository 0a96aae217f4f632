// Starts bench/gateway-server.js (the compiled gateway, fresh data dir) as a child process and
// reads its startup line; for the bench scripts that drive one gateway.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

/**
 * @param {Record<string, string>} [env] extra environment for the gateway (passed through to its settings)
 * @returns {Promise<{ child: import('node:child_process').ChildProcess, info: import('./gateway-server.js').StartupLine, base: string, rssMiB: () => number }>}
 */
export async function startGateway(env = {}) {
  const child = spawn(process.execPath, [path.join(here, 'gateway-server.js')], {
    cwd: path.dirname(here),
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  process.on('exit', () => child.kill('SIGKILL'));
  const stdout = child.stdout;
  if (!stdout) throw new Error('gateway-server: no stdout pipe');
  /** @type {import('./gateway-server.js').StartupLine} */
  const info = await new Promise((resolve, reject) => {
    readline.createInterface({ input: stdout }).once('line', (line) => resolve(JSON.parse(line)));
    child.once('exit', (code) => reject(new Error(`gateway-server exited (${code})`)));
  });
  /** The gateway's resident memory, MiB (Linux /proc). */
  const rssMiB = () => {
    const kiB = /VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1];
    if (kiB === undefined) throw new Error(`no VmRSS line in /proc/${child.pid}/status`);
    return Number(kiB) / 1024;
  };
  return { child, info, base: `http://127.0.0.1:${info.port}`, rssMiB };
}
