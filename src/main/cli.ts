import fs from 'node:fs';
import { ConfigError } from '../config-error.js';
import { loadSettingsConfig } from '../settings-config.js';
import { createStore } from '../store/create-store.js';
import { isConnectionRefusal } from '../store/faults.js';
import { asksForHelp, parse, UsageError } from './cli-args.js';

/**
 * The usage text. It names every command, so it loads their modules: each command's module is
 * loaded only when that command runs (G296; `serve` loads none of them, and the client commands and
 * `migrate-store` would bring the SDK and `pg`), and this text only when it is shown (a usage
 * error, `help`): the commands get it as a function (G420).
 */
async function usage(): Promise<string> {
  const [{ KEYS_USAGE }, { ACCOUNTS_USAGE, CREDITS_USAGE }, { CLIENT_USAGE }] = await Promise.all([
    import('./keys-cli.js'),
    import('./credits-cli.js'),
    import('./client-commands.js'),
  ]);
  return `Usage: mediagate <command>

  serve [--role api|worker|all] start the gateway (same as npm start); api: answer callers only,
                                worker: run tasks only (HTTP: /healthz and /readyz), all (default): both
  build                         only compile (the launcher builds when dist/ is older than src/)
  help, --help, -h              this text (also after any command: mediagate keys --help)
${KEYS_USAGE}
${ACCOUNTS_USAGE}
${CREDITS_USAGE}
  backup FILE                   write a consistent copy of the database to FILE (safe while serving)
  migrate-store --to postgres://... [--from FILE] [--files]
                                copy the SQLite database (of MEDIAGATE_DATA_DIR, or FILE) into an empty
                                PostgreSQL database (--to defaults to MEDIAGATE_DATABASE_URL); --files
                                also copies local result and asset files into MEDIAGATE_S3_BUCKET.
                                Stop the gateways first (docs/guides/upgrading.md)
${CLIENT_USAGE}

Settings come from the environment; see README.md.`;
}

// The gateway (serve.ts) and the store copier are loaded by the commands that use them, so the
// operator and client commands (and `build`) start without loading the HTTP app and its providers.
async function serve(args: string[]): Promise<void> {
  const { values } = parse(args, { role: { type: 'string' } }, 0);
  const { startServer } = await import('./serve.js');
  const server = await startServer(values.role === undefined ? process.env : { ...process.env, MEDIAGATE_ROLE: values.role });
  let signals = 0;
  const stop = (signal: string): void => {
    if (++signals > 1) process.exit(1);
    process.stderr.write(`${signal}: finishing running tasks, then exiting\n`);
    server.close().then(
      () => process.exit(0),
      (err: unknown) => {
        console.error(err);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

async function backup(args: string[]): Promise<number> {
  const {
    positionals: [file],
  } = parse(args, {}, 1);
  if (!file) throw new UsageError('backup needs a FILE to write the copy to');
  if (fs.existsSync(file)) throw new UsageError(`${file} exists; choose a new file name`);
  const config = loadSettingsConfig();
  // Said before opening the store: opening it would connect to (and migrate) the database for a command with nothing to do there (G472).
  if (config.databaseUrl !== undefined) {
    console.error('backup copies the embedded SQLite database; this gateway uses PostgreSQL (MEDIAGATE_DATABASE_URL): back it up with pg_dump');
    return 1;
  }
  const store = await createStore(config);
  try {
    if (!store.backup) {
      console.error('backup copies the embedded SQLite database; this store has no such copy');
      return 1;
    }
    try {
      await store.backup(file);
    } catch (err) {
      // a folder that does not exist or cannot be written: the operator's to fix, not a stack trace (G458)
      console.error(`mediagate: backup could not write ${file}: ${(err as Error).message}`);
      return 1;
    }
    const { s3 } = loadSettingsConfig();
    const files = s3
      ? `signing-secret of the data directory; results, assets and inputs are in s3://${s3.bucket}/${s3.prefix}`
      : 'results/, assets/, inputs/ and signing-secret of the data directory';
    console.log(`database copied to ${file} (also copy ${files}; see docs/guides/backup-restore.md)`);
    return 0;
  } finally {
    await store.close();
  }
}

/** An error of the system (a port taken, a folder not writable): its message says it all (G458). */
function systemError(err: unknown): err is NodeJS.ErrnoException {
  const e = err as NodeJS.ErrnoException | undefined;
  return typeof e?.code === 'string' && typeof e.syscall === 'string';
}

/**
 * The system error itself, or the error that wraps one: "could not open the PostgreSQL store at
 * postgres://user:***@host/db: connect ECONNREFUSED ..." wraps pg's connect error as its `cause`,
 * and its message (the URL's password redacted) says it all (G472).
 */
function systemFault(err: unknown): NodeJS.ErrnoException | undefined {
  if (systemError(err)) return err;
  const cause = (err as Error | undefined)?.cause;
  return err instanceof Error && systemError(cause) ? cause : undefined;
}

async function main(argv: string[]): Promise<void> {
  const [command, ...args] = argv;
  if (command === 'help' || asksForHelp(argv)) {
    process.stdout.write(`${await usage()}\n`);
    return;
  }
  try {
    if (command === 'serve' || command === undefined) return await serve(args);
    if (command === 'keys') {
      process.exitCode = await (await import('./keys-cli.js')).keysCommand(args, usage);
      return;
    }
    if (command === 'accounts') {
      process.exitCode = await (await import('./credits-cli.js')).accountsCommand(args, usage);
      return;
    }
    if (command === 'credits') {
      process.exitCode = await (await import('./credits-cli.js')).creditsCommand(args, usage);
      return;
    }
    if (command === 'backup') {
      process.exitCode = await backup(args);
      return;
    }
    if (command === 'migrate-store') {
      process.exitCode = await (await import('./migrate-store.js')).migrateStoreCommand(args);
      return;
    }
    if (command === 'generate' || command === 'tasks') {
      process.exitCode = await (await import('./client-commands.js')).clientCommand(command, args);
      return;
    }
    if (command === 'build') return; // the launcher already built
    console.error(await usage());
    process.exitCode = 2;
  } catch (err) {
    if (err instanceof UsageError) {
      console.error(err.message);
      process.exitCode = 2;
      return;
    }
    if (err instanceof ConfigError) {
      console.error(`mediagate: invalid setting ${err.message}`);
      process.exit(1);
    }
    const fault = systemFault(err);
    // a refusal of the connection the settings describe (no such database, a wrong password): one line too (G477)
    if (fault || (err instanceof Error && isConnectionRefusal(err.cause))) {
      const hint = fault?.code === 'EADDRINUSE' ? ' (another process listens there: stop it, or set PORT to a free port)' : '';
      console.error(`mediagate: ${(err as Error).message}${hint}`);
      process.exit(1);
    }
    throw err;
  }
}

await main(process.argv.slice(2));
