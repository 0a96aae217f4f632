#!/usr/bin/env node
// `npm test` (G416): builds dist/ first (the launcher's `build`, what the tests' global setup would
// do; it then finds dist/ current), then runs the type check (`npm run typecheck`, which writes
// nothing) and the whole suite (`vitest run`, with this script's arguments) side by side. The suite
// leaves one of the two cores idle for a good part of its run (its tests wait on sockets, processes
// and timers), which the type check fills instead of running first on its own. The type check's
// output is printed once both have ended; the exit status fails when either failed.
import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

const built = spawnSync(process.execPath, [path.join(root, 'bin', 'mediagate.js'), 'build'], { cwd: root, stdio: 'inherit' });
if (built.status !== 0) process.exit(built.status ?? 1);

/**
 * Runs `command`, resolving with its exit status; its output is collected when `collect` is given.
 * @param {string} command
 * @param {string[]} args
 * @param {Buffer[]} [collect]
 * @returns {Promise<number>}
 */
function run(command, args, collect) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: root, stdio: collect ? ['ignore', 'pipe', 'pipe'] : 'inherit' });
    if (collect) {
      child.stdout?.on('data', (chunk) => collect.push(chunk));
      child.stderr?.on('data', (chunk) => collect.push(chunk));
    }
    child.on('error', (err) => {
      collect?.push(Buffer.from(`${err.message}\n`));
      resolve(1);
    });
    child.on('close', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

/** @type {Buffer[]} */
const typecheckOutput = [];
const [typecheck, suite] = await Promise.all([
  run(npm, ['run', '--silent', 'typecheck'], typecheckOutput),
  run(process.execPath, [path.join(root, 'node_modules', 'vitest', 'vitest.mjs'), 'run', ...process.argv.slice(2)]),
]);
const output = Buffer.concat(typecheckOutput).toString();
process.stdout.write(`\n${typecheck === 0 ? 'typecheck passed' : 'typecheck FAILED'}${output.trim() ? `:\n${output}` : ''}\n`);
process.exit(typecheck !== 0 ? typecheck : suite);
