import path from 'node:path';
import { openSqliteStore } from '../../src/store/sqlite/open.js';
import { tempDir } from '../helpers/harness.js';
import { runStoreContract } from '../cases/store-contract.case.js';
import { openMemoryStore } from '../helpers/memory-store.js';

const openFile = async (file: string) => openSqliteStore(file);
runStoreContract('sqlite (memory)', async () => openMemoryStore(), { openFile });
runStoreContract('sqlite (file, WAL)', async () => openSqliteStore(path.join(tempDir(), 'mediagate.db')), { openFile });
