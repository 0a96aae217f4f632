/**
 * The local storage areas copied into the bucket (`mediagate migrate-store --files`, G189): every
 * file of `<data>/results`, `<data>/inputs` and `<data>/assets` stored under the same folder and
 * name in the configured bucket's areas, where a gateway configured with that bucket looks for it
 * (tasks and assets name their files by folder and name only, never by a path). Files being
 * written (`*.tmp`) and names the gateway never makes are skipped. A copy replaces an object of the
 * same name, so the step can be run again.
 */
import fs from 'node:fs';
import path from 'node:path';
import { isSafeBlobPath } from './blob-store.js';
import type { BlobStores } from './blob-stores.js';
import { FsBlobStore } from './fs-blob-store.js';

const AREAS = ['results', 'inputs', 'assets'] as const;

export interface AreaCopied {
  area: (typeof AREAS)[number];
  files: number;
  bytes: number;
}

/** Copies the local areas under `dataDir` into `target`; reports each area's files when it is done. */
export async function copyLocalFiles(dataDir: string, target: BlobStores, onArea?: (copied: AreaCopied) => void): Promise<AreaCopied[]> {
  const copied: AreaCopied[] = [];
  for (const area of AREAS) {
    const root = path.join(dataDir, area);
    const done: AreaCopied = { area, files: 0, bytes: 0 };
    if (fs.existsSync(root)) {
      const source = new FsBlobStore(root);
      for await (const folder of await fs.promises.opendir(root)) {
        // streamed: one folder per task or asset
        if (!folder.isDirectory()) continue;
        for (const file of await fs.promises.readdir(path.join(root, folder.name), { withFileTypes: true })) {
          if (!file.isFile() || file.name.endsWith('.tmp') || !isSafeBlobPath(folder.name, file.name)) continue;
          await target[area].copyFrom({ store: source, folder: folder.name, name: file.name }, folder.name, file.name);
          done.files++;
          done.bytes += (await source.stat(folder.name, file.name))?.size ?? 0;
        }
      }
    }
    onArea?.(done);
    copied.push(done);
  }
  return copied;
}
