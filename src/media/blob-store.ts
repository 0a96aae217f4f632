import fs from 'node:fs';
import path from 'node:path';

const SAFE_SEGMENT = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/;

/**
 * Result files on the local disk: `<root>/<taskId>/<name>`. Writes go to a temporary name first and
 * are renamed into place, so a reader never sees half a file and a crash leaves no torn result.
 */
export class FsBlobStore {
  constructor(readonly root: string) {
    fs.mkdirSync(root, { recursive: true });
  }

  /** The path of a result file; throws on names that could leave the root. */
  pathOf(taskId: string, name: string): string {
    if (!SAFE_SEGMENT.test(taskId) || !SAFE_SEGMENT.test(name) || name.includes('..')) {
      throw new Error(`unsafe result path ${taskId}/${name}`);
    }
    return path.join(this.root, taskId, name);
  }

  /** Stores bytes, or moves a file the provider wrote (a copy when it is on another device); returns the size. */
  async put(taskId: string, name: string, source: { data: Buffer } | { path: string }): Promise<number> {
    const target = this.pathOf(taskId, name);
    await fs.promises.mkdir(path.dirname(target), { recursive: true });
    const tmp = `${target}.${process.pid}.${Date.now()}.tmp`;
    if ('data' in source) {
      await fs.promises.writeFile(tmp, source.data);
    } else {
      try {
        await fs.promises.rename(source.path, tmp);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
        await fs.promises.copyFile(source.path, tmp);
      }
    }
    await fs.promises.rename(tmp, target);
    return (await fs.promises.stat(target)).size;
  }

  /** Removes one file of a task (missing is fine). */
  async remove(taskId: string, name: string): Promise<void> {
    await fs.promises.rm(this.pathOf(taskId, name), { force: true });
  }

  /** Removes every file of a task. */
  async removeTask(taskId: string): Promise<void> {
    if (!SAFE_SEGMENT.test(taskId)) return;
    await fs.promises.rm(path.join(this.root, taskId), { recursive: true, force: true });
  }
}
