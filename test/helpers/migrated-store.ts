import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { migrate } from '../../src/store/sqlite/migrations.js';
import { openSqliteStore, type SqliteOptions, type SqliteStore } from '../../src/store/sqlite/open.js';

/**
 * SQLite stores for tests, copied from a schema migrated once per test process (G414) instead of
 * running every migration again for each.
 */
let image: Buffer | undefined;
let templateFile: string | undefined;

function migratedImage(): Buffer {
  if (!image) {
    const db = new Database(':memory:');
    migrate(db);
    image = db.serialize();
    db.close();
  }
  return image;
}

/** A new in-memory store: what `openSqliteStore(':memory:')` gives, cheaper. */
export function openMemoryStore(options: Omit<SqliteOptions, 'image'> = {}): SqliteStore {
  return openSqliteStore(':memory:', { ...options, image: migratedImage() });
}

/**
 * A new store in the file `mediagate.db` of the folder `dir`, in WAL mode as a
 * server's: what `openSqliteStore(file)` on a new file gives, cheaper. The migrations themselves
 * still run on new files in the tests that start servers and CLIs.
 */
export function openFileStore(dir: string, options: Omit<SqliteOptions, 'image'> = {}): SqliteStore {
  if (!templateFile) {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'mediagate-template-')), 'mediagate.db');
    fs.writeFileSync(file, migratedImage());
    const db = new Database(file);
    db.pragma('journal_mode = WAL'); // recorded in the file's header: each copy opens in WAL mode
    db.close(); // the last connection's close checkpoints and removes the WAL
    templateFile = file;
  }
  const file = path.join(dir, 'mediagate.db');
  fs.copyFileSync(templateFile, file);
  return openSqliteStore(file, options);
}
