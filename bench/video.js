// Sandbox video benchmark: wall time of an 8-second video at 720p, 1080p and 4K (with audio),
// backdrop rendering included. Writes a marked section of docs/BENCHMARKS.md.
// Run: node bin/mediagate.js build && node bench/video.js
import { writeDocSection } from './doc-section.js';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// The compiled renderer, typed as its source (dist/ is src/ compiled). Imported by URL, which the
// type checker does not follow, so checking bench/ needs no build and never reads dist/.
const { renderSandboxVideo } = /** @type {typeof import('../src/providers/sandbox/video.js')} */ (
  await import(new URL('../dist/providers/sandbox/video.js', import.meta.url).href)
);

const runs = Number(process.env.BENCH_VIDEO_RUNS ?? 3);
/** @type {[label: string, width: number, height: number][]} */
const sizes = [
  ['720p', 1280, 720],
  ['1080p', 1920, 1080],
  ['4K', 3840, 2160],
];
/** @typedef {{ label: string, width: number, height: number, median: number, min: number, bytes: number }} Row */
/** @type {Row[]} */
const rows = [];
for (const [label, width, height] of sizes) {
  /** @type {number[]} */
  const times = [];
  let bytes = 0;
  for (let i = 0; i < runs; i++) {
    const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-video-'));
    const t0 = performance.now();
    const out = await renderSandboxVideo({ width, height, durationSec: 8, audio: true, prompt: 'a red fox running through snow', seed: `bench-${i}`, workDir });
    times.push(performance.now() - t0);
    bytes = fs.statSync(out.path).size;
    fs.rmSync(workDir, { recursive: true, force: true });
  }
  times.sort((a, b) => a - b);
  const median = times[Math.floor(times.length / 2)];
  const min = times[0];
  if (median === undefined || min === undefined) throw new Error(`BENCH_VIDEO_RUNS must be a whole number >= 1, got "${process.env.BENCH_VIDEO_RUNS}"`);
  rows.push({ label, width, height, median, min, bytes });
  console.log(label, times.map((t) => t.toFixed(0)).join(' ms, '), 'ms');
}
const row720 = /** @type {Row} */ (rows[0]); // `sizes` is not empty
const target = row720.median <= 2500 ? 'met' : 'MISSED';
const table = [
  `Sandbox video, 8 s with audio, 24 fps, H.264 ultrafast (median of ${runs} runs, ${os.cpus().length} cores, node ${process.version}, ${new Date().toISOString().slice(0, 10)}):`,
  '',
  '| size | median wall | fastest | file |',
  '|---|---|---|---|',
  ...rows.map(
    (r) => `| ${r.label} (${r.width}x${r.height}) | ${(r.median / 1000).toFixed(2)} s | ${(r.min / 1000).toFixed(2)} s | ${(r.bytes / 1024).toFixed(0)} KiB |`,
  ),
  '',
  `Target: 8-second 720p in <= 2.5 s wall: **${target}**.`,
].join('\n');
writeDocSection('video', `## Sandbox video rendering\n\n${table}`);
console.log(table);
