/** The test PostgreSQL server's administrative database; override with MEDIAGATE_TEST_POSTGRES_URL. No imports: vitest.config.ts and the global setup read it too. */
export const POSTGRES_ADMIN_URL = process.env.MEDIAGATE_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
