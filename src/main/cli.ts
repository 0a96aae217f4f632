import fs from 'node:fs';
import { createApiKey } from '../auth/keys.js';
import { ConfigError } from '../config-error.js';
import { loadConfig } from '../config.js';
import { createStore } from '../store/create-store.js';
import { parse, UsageError } from './cli-args.js';
import { parseCredits, toCredits } from '../credits/money.js';
import { migrateStoreCommand } from './migrate-store.js';
import { accountsCommand, ACCOUNTS_USAGE, creditsCommand, CREDITS_USAGE } from './credits-cli.js';
import type { Store } from '../store/types.js';
import { startServer } from './serve.js';
import { AppError } from '../errors.js';
import { checkCallbackUrl } from '../webhooks/callback-url.js';
import { CLIENT_USAGE, clientCommand } from './client-commands.js';

const USAGE = `Usage: mediagate <command>

  serve [--role api|worker|all] start the gateway (same as npm start); api: answer callers only,
                                worker: run tasks only (HTTP: /healthz and /readyz), all (default): both
  keys create --name NAME [--account ACCOUNT_ID]
                                create an API key spending the credits of ACCOUNT_ID (default: a new
                                account of its own); the key is printed alone on the last line
  keys list                     list keys (ids, prefixes, names, accounts; never the keys)
  keys revoke KEY_ID            revoke a key at once
  keys limit KEY_ID [--submits N|default] [--queries N|default] [--credits N|none]
                                set a key's own rate limits (per second; bursts of twice that) and its
                                spending cap (credits its tasks and chat may hold and be charged in all)
  keys webhook KEY_ID --url URL|none
                                set (none: clear) the webhook URL of the key's tasks whose create
                                request names no callback_url; tasks keep the URL in force at submit
${ACCOUNTS_USAGE}
${CREDITS_USAGE}
  backup FILE                   write a consistent copy of the database to FILE (safe while serving)
  migrate-store --to postgres://... [--from FILE] [--files]
                                copy the SQLite database (of MEDIAGATE_DATA_DIR, or FILE) into an empty
                                PostgreSQL database (--to defaults to MEDIAGATE_DATABASE_URL); --files
                                also copies local result and asset files into MEDIAGATE_S3_BUCKET.
                                Stop the gateways first (docs/OPERATIONS.md)
${CLIENT_USAGE}

Settings come from the environment; see README.md.`;

function openStore(): Promise<Store> {
  return createStore(loadConfig());
}

async function withStore(fn: (store: Store) => Promise<number>): Promise<number> {
  const store = await openStore();
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

async function serve(args: string[]): Promise<void> {
  const { values } = parse(args, { role: { type: 'string' } }, 0);
  const server = await startServer(values.role === undefined ? process.env : { ...process.env, MEDIAGATE_ROLE: values.role });
  let signals = 0;
  const stop = (signal: string): void => {
    if (++signals > 1) process.exit(1);
    process.stderr.write(`${signal}: finishing running tasks, then exiting\n`);
    server.close().then(() => process.exit(0), (err: unknown) => { console.error(err); process.exit(1); });
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

/** `--submits N|default`: a rate, null for the server default, or the key's current value when absent. */
function rateOption(flag: string, raw: string | undefined, current: number | null | undefined): number | null {
  if (raw === undefined) return current ?? null;
  if (raw === 'default') return null;
  if (!/^[1-9][0-9]{0,6}$/.test(raw)) throw new UsageError(`${flag} must be a whole number from 1 to 9999999 or "default", got "${raw}"`);
  return Number(raw);
}

/** `--credits N|none`: a key's spending cap in micro-credits, null for none, or its current one when absent (G207). */
function spendCapOption(raw: string | undefined, current: number | null | undefined): number | null {
  if (raw === undefined) return current ?? null;
  if (raw === 'none') return null;
  const micro = parseCredits(raw);
  if (micro === undefined || micro <= 0) throw new UsageError(`--credits must be a number of credits above 0, at most 999999999.999999 (6 decimals), or "none", got "${raw}"`);
  return micro;
}

/** `--url URL`: the caller-URL rule of `callback_url` (G208), as a usage error. */
function webhookUrlOption(raw: string): string {
  try {
    return checkCallbackUrl(raw, loadConfig().allowPrivateUrls, '--url');
  } catch (err) {
    if (err instanceof AppError) throw new UsageError(err.message);
    throw err;
  }
}

async function keys(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  const store = await openStore();
  try {
    switch (sub) {
      case 'create': {
        const { values } = parse(rest, { name: { type: 'string' }, account: { type: 'string' } }, 0);
        if (!values.name || !/^.{1,100}$/.test(values.name)) throw new UsageError('keys create needs --name NAME (1-100 characters)');
        if (values.account !== undefined && !(await store.credits.getAccount(values.account))) throw new UsageError(`--account ${values.account}: no such account (see accounts list)`);
        const { secret, record } = await createApiKey(store.keys, values.name,
          values.account === undefined ? { startingMicro: loadConfig().credits.startingMicro } : { accountId: values.account });
        console.error(`Created API key ${record.id} (${record.name}). It is shown only now; store it safely.`);
        process.stdout.write(`${secret}\n`);
        return 0;
      }
      case 'list': {
        parse(rest, {}, 0);
        for (const k of await store.keys.list()) {
          const state = k.revokedAt ? `revoked ${new Date(k.revokedAt).toISOString()}` : 'active';
          console.log(`${k.id}\t${k.prefix}...\t${k.name}\t${k.accountId}\t${new Date(k.createdAt).toISOString()}\t${state}\twebhook ${k.webhookUrl ?? 'none'}`);
        }
        return 0;
      }
      case 'revoke': {
        const { positionals: [id] } = parse(rest, {}, 1);
        if (!id) throw new UsageError('keys revoke needs a KEY_ID (see keys list)');
        if (!(await store.keys.revoke(id, Date.now()))) { console.error(`no active key with id ${id}`); return 1; }
        console.log(`revoked ${id}`);
        return 0;
      }
      case 'limit': {
        const { values, positionals: [id] } = parse(rest, { submits: { type: 'string' }, queries: { type: 'string' }, credits: { type: 'string' } }, 1);
        const current = (await store.keys.list()).find((k) => k.id === id);
        if (!id || !current) throw new UsageError('keys limit needs the KEY_ID of an existing key (see keys list)');
        const submitRate = rateOption('--submits', values.submits, current.submitRate);
        const queryRate = rateOption('--queries', values.queries, current.queryRate);
        const cap = spendCapOption(values.credits, current.spendCapMicro);
        await store.keys.setRateLimits(id, { submitRate, queryRate });
        if (cap !== current.spendCapMicro) await store.keys.setSpendCap(id, cap);
        console.log(`${id}: submits ${submitRate ?? 'default'}/s, queries ${queryRate ?? 'default'}/s (bursts of twice that; in effect within 10 s); `
          + `spending cap ${cap === null ? 'none' : `${toCredits(cap)} credits`}`);
        return 0;
      }
      case 'webhook': {
        const { values, positionals: [id] } = parse(rest, { url: { type: 'string' } }, 1);
        if (!id || values.url === undefined) throw new UsageError('keys webhook needs a KEY_ID and --url URL|none');
        const url = values.url === 'none' ? null : webhookUrlOption(values.url);
        if (!(await store.keys.setWebhookUrl(id, url))) { console.error(`no key with id ${id}`); return 1; }
        console.log(`${id}: webhook ${url ?? 'none'} (for tasks submitted from now on)`);
        return 0;
      }
      default:
        throw new UsageError(USAGE);
    }
  } finally {
    await store.close();
  }
}

async function backup(args: string[]): Promise<number> {
  const { positionals: [file] } = parse(args, {}, 1);
  if (!file) throw new UsageError('backup needs a FILE to write the copy to');
  if (fs.existsSync(file)) throw new UsageError(`${file} exists; choose a new file name`);
  const store = await openStore();
  try {
    if (!store.backup) {
      console.error('backup copies the embedded SQLite database; this gateway uses PostgreSQL (MEDIAGATE_DATABASE_URL): back it up with pg_dump');
      return 1;
    }
    await store.backup(file);
    const { s3 } = loadConfig();
    const files = s3 ? `signing-secret of the data directory; results and assets are in s3://${s3.bucket}/${s3.prefix}` : 'results/, assets/ and signing-secret of the data directory';
    console.log(`database copied to ${file} (also copy ${files}; see docs/OPERATIONS.md)`);
    return 0;
  } finally {
    await store.close();
  }
}

async function main(argv: string[]): Promise<void> {
  const [command, ...args] = argv;
  try {
    if (command === 'serve' || command === undefined) return await serve(args);
    if (command === 'keys') { process.exitCode = await keys(args); return; }
    if (command === 'accounts') { process.exitCode = await withStore((store) => accountsCommand(store, args, USAGE)); return; }
    if (command === 'credits') { process.exitCode = await withStore((store) => creditsCommand(store, args, USAGE)); return; }
    if (command === 'backup') { process.exitCode = await backup(args); return; }
    if (command === 'migrate-store') { process.exitCode = await migrateStoreCommand(args); return; }
    if (command === 'generate' || command === 'tasks') { process.exitCode = await clientCommand(command, args); return; }
    if (command === 'build') return; // the launcher already built
    console.error(USAGE);
    process.exitCode = command === '--help' || command === 'help' ? 0 : 2;
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
    throw err;
  }
}

await main(process.argv.slice(2));
