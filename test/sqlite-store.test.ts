import path from 'node:path';
import { openSqliteStore } from '../src/store/sqlite/open.js';
import { tempDir } from './helpers/harness.js';
import { runStoreContract } from './store-contract.case.js';

runStoreContract('sqlite (memory)', () => openSqliteStore(':memory:'));
runStoreContract('sqlite (file, WAL)', () => openSqliteStore(path.join(tempDir(), 'mediagate.db')));
