import type { SettingValues } from '../../settings/read-settings.js';

/** How long the sandbox takes (D26): MEDIAGATE_SANDBOX_TIMING, or a sandbox's `timing` in providers.json. */
export type SandboxTiming = SettingValues['MEDIAGATE_SANDBOX_TIMING'];
import type { FamilyId } from '../../contract/families.js';
import type { OutputSpec } from '../../contract/output.js';

/**
 * How long the sandbox pretends to generate before rendering (D26):
 * `instant` 0; `fast` about a second for an image and a few seconds for a video;
 * `realistic` the typical generation times (docs/reference/api/README.md#retention-and-polling; minutes for video).
 */
export function simulatedDelayMs(timing: SandboxTiming, output: OutputSpec, family: FamilyId): number {
  if (timing === 'instant') return 0;
  if (output.kind === 'image') return timing === 'fast' ? 800 : 10_000;
  if (timing === 'fast') return 2_000;
  const seconds = output.durationSec;
  const minutes = family === 'reel' ? (seconds >= 25 ? 10 : seconds >= 15 ? 5 : 3) : seconds > 10 ? 5 : 3;
  return minutes * 60_000;
}

/**
 * Waits `ms` in steps, reporting progress from `from` to `to`. An abort (also one that came before
 * the call, or from inside `report`) rejects at once with the signal's reason, whatever it is.
 */
export async function simulateWork(ms: number, steps: number, from: number, to: number, signal: AbortSignal, report: (p: number) => void): Promise<void> {
  signal.throwIfAborted();
  if (ms <= 0) return;
  const step = ms / steps;
  for (let i = 1; i <= steps; i++) {
    await new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        clearTimeout(t);
        reject(signal.reason);
      };
      const t = setTimeout(() => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      }, step);
      signal.addEventListener('abort', onAbort, { once: true });
    });
    report(from + ((to - from) * i) / steps);
    signal.throwIfAborted();
  }
}
