#!/usr/bin/env node
// `npm test` (G416, G474): builds dist/ first (the launcher's `build`, what the tests' global setup
// would do; it then finds dist/ current), then runs the whole suite (`vitest run`, with this
// script's arguments). The type check is part of `npm run lint` (G474), which CI runs before this.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));

const built = spawnSync(process.execPath, [path.join(root, 'bin', 'mediagate.js'), 'build'], { cwd: root, stdio: 'inherit' });
if (built.status !== 0) process.exit(built.status ?? 1);

const suite = spawnSync(process.execPath, [path.join(root, 'node_modules', 'vitest', 'vitest.mjs'), 'run', ...process.argv.slice(2)], {
  cwd: root,
  stdio: 'inherit',
});
process.exit(suite.status ?? 1);
