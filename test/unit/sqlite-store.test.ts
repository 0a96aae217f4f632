import { openSqliteStore } from '../../src/store/sqlite/open.js';
import { tempDir } from '../helpers/temp-root.js';
import { runStoreContract } from '../cases/store-contract.case.js';
import { openFileStore, openMemoryStore } from '../helpers/migrated-store.js';

const openFile = async (file: string) => openSqliteStore(file);
runStoreContract('sqlite (memory)', async () => openMemoryStore(), { openFile });
runStoreContract('sqlite (file, WAL)', async () => openFileStore(tempDir()), { openFile });
