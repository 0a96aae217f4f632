/**
 * Progress of a synchronous call that reports none (G130): 1 when the call goes out,
 * then a time estimate rising towards 95 (63% of the way after `typicalMs`), never 100 before the
 * answer, never going down. Stopped when the call ends.
 */
export function estimateProgress(report: (progress: number) => void, typicalMs: number, everyMs = 2000): () => void {
  const began = Date.now();
  report(1);
  const timer = setInterval(() => {
    const t = Date.now() - began;
    report(Math.floor(1 + 94 * (1 - Math.exp(-t / typicalMs))));
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
