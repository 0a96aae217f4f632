import { describe } from 'vitest';
import { openPostgresStore } from '../../src/store/postgres/index.js';
import { postgresDatabase, postgresUnavailable } from '../helpers/postgres.js';
import { runStoreContract } from '../cases/store-contract.case.js';

const unavailable = await postgresUnavailable();

describe.skipIf(unavailable !== undefined)(`PostgreSQL store${unavailable ? ` (skipped: ${unavailable})` : ''}`, () => {
  const database = postgresDatabase();
  runStoreContract('postgres', async () => openPostgresStore({ url: await database.migrated() }));
});
