// The machine's speed on one core, for reading timings taken on different days (run by hand:
// `node bench/cpu-reference.js`; never part of the tests). The machines are shared VMs whose speed
// drifts by a quarter within hours and more between days (docs/BENCHMARKS.md, "Test suite"): a
// timing of the suite means little without this number beside it. It times a fixed loop of 3e8
// additions (no allocation, no I/O) five times and prints the fastest and the median, in ms.
const ROUNDS = 5;
/** @type {number[]} */
const times = [];
let sink = 0;
for (let round = 0; round < ROUNDS; round++) {
  const start = process.hrtime.bigint();
  let x = 0;
  for (let i = 0; i < 3e8; i++) x += i % 7;
  sink += x;
  times.push(Number(process.hrtime.bigint() - start) / 1e6);
}
times.sort((a, b) => a - b);
if (sink < 0) throw new Error('unreachable: the sum is used, so the loop cannot be left out');
console.log(`cpu reference: fastest ${times[0]?.toFixed(0)} ms, median ${times[Math.floor(ROUNDS / 2)]?.toFixed(0)} ms (3e8 additions; lower is faster)`);
