// Sandbox image renderer benchmark (run by hand: `node bin/mediagate.js build && node bench/image.js`;
// never part of the tests). Times renderSandboxImage from dist/ directly, in this process: a
// 1024x1024 PNG without and with one reference image (the reference decode and thumbnail
// composite), and a 4096x2304 PNG (the largest size). Prints the median, min and max per case;
// writes nothing. `npm run bench` (bench/run.js) times the plain sizes for docs/BENCHMARKS.md.
// Settings: BENCH_IMAGE_RUNS (measured runs per case, default 5), BENCH_IMAGE_WARM (default 3).
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import sharp from 'sharp';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
// the compiled renderer in dist/, typed as its source
const { renderSandboxImage } = /** @type {typeof import('../src/providers/sandbox/image.js')} */ (
  await import(pathToFileURL(path.join(root, 'dist', 'providers', 'sandbox', 'image.js')).href)
);

/** @param {string} name @param {number} fallback @param {number} min */
function intEnv(name, fallback, min) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) throw new Error(`${name} must be a whole number >= ${min}, got "${raw}"`);
  return n;
}
const RUNS = intEnv('BENCH_IMAGE_RUNS', 5, 1);
const WARM = intEnv('BENCH_IMAGE_WARM', 3, 0);

const PROMPT = 'A watercolour painting of a lighthouse on a rocky cliff at sunset, seagulls overhead';
const reference = await sharp({ create: { width: 640, height: 480, channels: 3, background: '#2050d0' } })
  .jpeg()
  .toBuffer();
const cases = [
  { label: '1024x1024 png, no references', spec: { width: 1024, height: 1024 } },
  { label: '1024x1024 png, 1 reference (640x480 jpeg)', spec: { width: 1024, height: 1024, references: [reference] } },
  { label: '4096x2304 png, no references', spec: { width: 4096, height: 2304 } },
];

/**
 * @param {number[]} xs
 * @returns {number}
 */
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  // (an empty list: undefined + undefined, NaN)
  // biome-ignore format: the formatter would move the first cast's comment out of the parentheses (casting the sum, not s[mid - 1])
  return s.length % 2 ? /** @type {number} */ (s[mid]) : (/** @type {number} */ (s[mid - 1]) + /** @type {number} */ (s[mid])) / 2;
};

console.log(
  `sandbox image renderer: ${RUNS} runs per case after ${WARM} warm-up, node ${process.version}, ${os.availableParallelism?.() ?? os.cpus().length} cores`,
);
for (const c of cases) {
  /** @type {import('../src/providers/sandbox/image.js').SandboxImageSpec} */
  const spec = { prompt: PROMPT, seed: 'seed-1', format: 'png', ...c.spec };
  for (let i = 0; i < WARM; i++) await renderSandboxImage(spec);
  const times = [];
  let bytes = 0;
  for (let i = 0; i < RUNS; i++) {
    const t0 = process.hrtime.bigint();
    const png = await renderSandboxImage(spec);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
    bytes = png.length;
  }
  console.log(`${c.label}: median ${median(times).toFixed(1)} ms (min ${Math.min(...times).toFixed(1)}, max ${Math.max(...times).toFixed(1)}), ${bytes} bytes`);
}
