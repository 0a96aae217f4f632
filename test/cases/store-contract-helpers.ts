/**
 * Shared pieces of the store contract suite (`store-contract*.case.ts`). The suite talks to the
 * `Store` interface only and awaits every call's result (G176), so it runs unchanged against every
 * backend.
 */
import { afterEach, beforeEach } from 'vitest';
import { mediaRefs } from '../../src/contract/media-refs.js';
import type { AssetRecord, NewTask, Store } from '../../src/store/types.js';

/** Opens a fresh, empty store (a new database each call). */
export type OpenStore = () => Promise<Store>;

export interface StoreContractOptions {
  /** Opens an existing database file read-write: used to read what `backup(file)` wrote. */
  openFile?: (file: string) => Promise<Store>;
}

/** A fixed clock for the suite: every time below is relative to it, so expected values are exact. */
export const T = 1_700_000_000_000;
export const MINUTE = 60_000;
export const DAY = 86_400_000;

let seq = 0;

/** A queued `pic` task for `key_a` on the `sandbox` provider; `over` replaces any field. */
export function newTask(over: Partial<NewTask> = {}): NewTask {
  seq++;
  return {
    id: `task_contract_${seq}_${Math.random().toString(36).slice(2)}`,
    ownerKeyId: 'key_a',
    family: 'pic',
    form: null,
    model: 'pic',
    provider: 'sandbox',
    request: { params: { prompt: 'x' }, output: { kind: 'image', width: 8, height: 8, format: 'png' }, media: mediaRefs() },
    amount: 1,
    createdAt: Date.now() + seq,
    ...over,
  };
}

/** An approved 100-byte PNG asset of `key_a`, created at T and kept a day; `over` replaces any field. */
export function newAsset(over: Partial<AssetRecord> = {}): AssetRecord {
  seq++;
  return {
    id: `asset_contract_${seq}`,
    ownerKeyId: 'key_a',
    status: 'approved',
    reason: null,
    kind: 'image',
    format: 'png',
    width: 640,
    height: 480,
    duration: null,
    fps: null,
    bytes: 100,
    file: 'asset.png',
    createdAt: T,
    expiresAt: T + DAY,
    ...over,
  };
}

/** A fresh store for each test of the enclosing describe, closed after it (also when the test failed). */
export function useStore(open: OpenStore): () => Store {
  let store: Store | undefined;
  beforeEach(async () => {
    store = await open();
  });
  afterEach(async () => {
    const s = store;
    store = undefined;
    await s?.close();
  });
  return () => {
    if (!store) throw new Error('no store: useStore() must be called inside a describe block');
    return store;
  };
}

/** Ids of records, sorted (for comparisons where the store promises no order). */
export const idsOf = (records: ReadonlyArray<{ id: string }>): string[] => records.map((r) => r.id).sort();
