/**
 * The sandbox provider at `instant` timing, holding each task until the test lets it go (G276).
 *
 * Tests that follow a task while it runs (a long-poll, `waitFor`'s `?wait=N`, a cancel of a running
 * task) used `fast` timing, 0.8 s per image and 2 s per video of waiting, and relied on the task
 * still running when they first asked. Here nothing runs a task's generation before its `release`:
 * the order is caused, not timed, and the wait is only as long as the test's own steps. Test-only.
 */
import { createSandboxProvider } from '../../src/providers/sandbox/index.js';
import type { MediaProvider } from '../../src/providers/types.js';

export interface HeldSandbox {
  /** The provider (id `sandbox`): pass it as the harness's `providers`. */
  provider: MediaProvider;
  /** Lets task `id` generate (before or after its start was called). */
  release(id: string): void;
  /** Lets every task generate, those held now and any later (before a gateway closes). */
  releaseAll(): void;
}

export function heldSandbox(): HeldSandbox {
  const sandbox = createSandboxProvider({ timing: 'instant' });
  const gates = new Map<string, { open: Promise<void>; release: () => void }>();
  let all = false;
  const gate = (id: string) => {
    let g = gates.get(id);
    if (!g) {
      let release = (): void => undefined;
      const open = new Promise<void>((resolve) => {
        release = resolve;
      });
      g = { open, release };
      gates.set(id, g);
    }
    return g;
  };
  const provider: MediaProvider = {
    ...sandbox,
    async start(job, ctx) {
      if (!all) {
        // held until released; a cancel or a shutdown (the signal) ends the wait as it would a generation
        await new Promise<void>((resolve, reject) => {
          const onAbort = (): void => reject(ctx.signal.reason);
          if (ctx.signal.aborted) {
            onAbort();
            return;
          }
          ctx.signal.addEventListener('abort', onAbort, { once: true });
          void gate(job.taskId).open.then(() => {
            ctx.signal.removeEventListener('abort', onAbort);
            resolve();
          });
        });
      }
      return sandbox.start(job, ctx);
    },
  };
  return {
    provider,
    release: (id) => gate(id).release(),
    releaseAll: () => {
      all = true;
      for (const g of gates.values()) g.release(); // a held start has made its task's gate
    },
  };
}
