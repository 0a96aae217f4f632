/**
 * `mediagate migrate-store --to postgres://... [--from FILE] [--files]` (G187-G189): moves an
 * installation from the embedded SQLite store to PostgreSQL. Progress goes to stdout, a line per
 * table (and every 100,000 rows of a long one), then one summary line; a problem is one line on
 * stderr and exit code 1, with nothing written to the target database.
 */
import { loadSettingsConfig } from '../settings-config.js';
import { isPostgresUrl } from '../settings/values.js';
import { copyLocalFiles } from '../media/copy-local-files.js';
import { openBlobStores } from '../media/blob-stores.js';
import { migrateSqliteToPostgres } from '../store/migrate/copy-to-postgres.js';
import { MigrationError } from '../store/migrate/sqlite-source.js';
import { redactedUrl } from '../redacted-url.js';
import { parse, UsageError } from './cli-args.js';

export async function migrateStoreCommand(args: string[]): Promise<number> {
  const { values } = parse(args, { to: { type: 'string' }, from: { type: 'string' }, files: { type: 'boolean' } }, 0);
  const config = loadSettingsConfig();
  const to = values.to ?? config.databaseUrl;
  if (to === undefined) throw new UsageError('migrate-store needs --to postgres://user:password@host:5432/database (or MEDIAGATE_DATABASE_URL)');
  if (!isPostgresUrl(to))
    throw new UsageError('--to must be a PostgreSQL URL like postgres://user:password@host:5432/mediagate (scheme postgres:// or postgresql://)');
  if (values.files && !config.s3) {
    throw new UsageError(
      '--files copies the local result and asset files into the bucket of MEDIAGATE_S3_BUCKET, which is not set (without a bucket, let the new processes share this data directory)',
    );
  }
  const from = values.from ?? config.databaseFile;
  const target = redactedUrl(to, 'the --to URL');
  console.log(`copying ${from} to ${target}`);
  const copyFiles = async (): Promise<void> => {
    const stores = await openBlobStores(config);
    try {
      await copyLocalFiles(config.dataDir, stores, ({ area, files, bytes }) =>
        console.log(`files ${area}: ${files} (${bytes} bytes) copied to ${stores[area].location}`),
      );
    } finally {
      stores.close();
    }
  };
  try {
    const copied = await migrateSqliteToPostgres({
      sqliteFile: from,
      postgresUrl: to,
      onProgress: ({ table, rows, done }) => console.log(`${table}: ${rows} rows${done ? '' : ' so far'}`),
      ...(values.files && { beforeCopy: copyFiles }),
    });
    console.log(`migrated to ${target}, counts verified: ${copied.map((c) => `${c.table} ${c.rows}`).join(', ')}`);
    if (!config.s3) {
      console.log(
        `result and asset files stay in ${config.dataDir} (results/, inputs/, assets/): gateways on PostgreSQL must see this data directory, or use a bucket (see docs/guides/upgrading.md)`,
      );
    }
    return 0;
  } catch (err) {
    if (!(err instanceof MigrationError)) throw err;
    console.error(`migrate-store: ${err.message}`);
    return 1;
  }
}
