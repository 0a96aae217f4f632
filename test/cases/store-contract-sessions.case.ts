/** Store contract, console sessions (G361): insert, find, delete one, forget the expired ones. */
import { describe, expect, it } from 'vitest';
import { MINUTE, T, useStore, type OpenStore } from './store-contract-helpers.js';

export function sessionsStoreContract(open: OpenStore): void {
  describe('console sessions', () => {
    const s = useStore(open);

    it('find answers what insert stored; delete ends one session; deleteExpired forgets only those past their expiry', async () => {
      const store = s();
      await store.sessions.insert({ idHash: 'sess-a', keyHash: 'key-a', csrfToken: 'csrf-a', createdAt: T, expiresAt: T + MINUTE });
      await store.sessions.insert({ idHash: 'sess-b', keyHash: 'key-b', csrfToken: 'csrf-b', createdAt: T, expiresAt: T + 10 * MINUTE });
      expect(await store.sessions.find('sess-a')).toEqual({ idHash: 'sess-a', keyHash: 'key-a', csrfToken: 'csrf-a', createdAt: T, expiresAt: T + MINUTE });
      expect(await store.sessions.find('sess-none')).toBeUndefined();
      expect(await store.sessions.deleteExpired(T + 2 * MINUTE)).toBe(1);
      expect(await store.sessions.find('sess-a')).toBeUndefined();
      expect(await store.sessions.delete('sess-b')).toBe(true);
      expect(await store.sessions.delete('sess-b')).toBe(false);
      expect(await store.sessions.find('sess-b')).toBeUndefined();
    });
  });
}
