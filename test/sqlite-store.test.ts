import path from 'node:path';
import { openSqliteStore } from '../src/store/sqlite/open.js';
import { tempDir } from './helpers/harness.js';
import { runStoreContract } from './store-contract.case.js';

const openFile = (file: string) => openSqliteStore(file);
runStoreContract('sqlite (memory)', () => openSqliteStore(':memory:'), { openFile });
runStoreContract('sqlite (file, WAL)', () => openSqliteStore(path.join(tempDir(), 'mediagate.db')), { openFile });
