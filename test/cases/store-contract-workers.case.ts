/** The store contract of worker heartbeats (G264): beats, liveness by role, leaving, forgetting. */
import { describe, expect, it } from 'vitest';
import { T, useStore, type OpenStore } from './store-contract-helpers.js';

export function workerStoreContract(open: OpenStore): void {
  describe('WorkerStore (heartbeats)', () => {
    const s = useStore(open);

    it('counts the workers seen since a time, per role; a beat refreshes, leave removes', async () => {
      const { workers } = s();
      await workers.beat({ id: 'h:1:a', role: 'worker' }, T, T - 86_400_000);
      await workers.beat({ id: 'h:2:b', role: 'worker' }, T, T - 86_400_000);
      await workers.beat({ id: 'h:3:c', role: 'all' }, T - 60_000, T - 86_400_000);
      expect(await workers.liveByRole(T - 15_000)).toEqual([{ role: 'worker', count: 2 }]);
      await workers.beat({ id: 'h:3:c', role: 'all' }, T + 1000, T - 86_400_000);
      expect(await workers.liveByRole(T - 15_000)).toEqual([
        { role: 'all', count: 1 },
        { role: 'worker', count: 2 },
      ]);
      await workers.leave('h:1:a');
      expect(await workers.liveByRole(T - 15_000)).toEqual([
        { role: 'all', count: 1 },
        { role: 'worker', count: 1 },
      ]);
    });

    it('a beat forgets the rows of workers not seen since `forgetBefore`, never its own', async () => {
      const { workers } = s();
      await workers.beat({ id: 'gone', role: 'worker' }, T - 2 * 86_400_000, 0);
      await workers.beat({ id: 'here', role: 'worker' }, T, T - 86_400_000);
      expect(await workers.liveByRole(0)).toEqual([{ role: 'worker', count: 1 }]);
    });
  });
}
