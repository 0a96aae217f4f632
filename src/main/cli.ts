import fs from 'node:fs';
import path from 'node:path';
import { createApiKey } from '../auth/keys.js';
import { ConfigError } from '../config-error.js';
import { loadConfig } from '../config.js';
import { openSqliteStore } from '../store/sqlite/open.js';
import { startServer } from './serve.js';

const USAGE = `Usage: mediagate <command>

  serve                         start the gateway (same as npm start)
  keys create --name NAME       create an API key; the key is printed alone on the last line
  keys list                     list keys (ids, names, prefixes; never the keys)
  keys revoke KEY_ID            revoke a key at once
  backup FILE                   write a consistent copy of the database to FILE (safe while serving)
  keys limit KEY_ID [--submits N|default] [--queries N|default]
                                set a key's own rate limits (per second; bursts of twice that)

Settings come from the environment; see README.md.`;

function openStore() {
  const config = loadConfig();
  return openSqliteStore(path.join(config.dataDir, 'mediagate.db'));
}

function argValue(args: string[], flag: string): string | undefined {
  const i = args.indexOf(flag);
  if (i >= 0) return args[i + 1];
  const eq = args.find((a) => a.startsWith(`${flag}=`));
  return eq?.slice(flag.length + 1);
}

async function serve(): Promise<void> {
  const server = await startServer();
  let signals = 0;
  const stop = (signal: string): void => {
    if (++signals > 1) process.exit(1);
    process.stderr.write(`${signal}: finishing running tasks, then exiting\n`);
    server.close().then(() => process.exit(0), (err: unknown) => { console.error(err); process.exit(1); });
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

function keys(args: string[]): number {
  const [sub, ...rest] = args;
  const store = openStore();
  try {
    if (sub === 'create') {
      const name = argValue(rest, '--name');
      if (!name || !/^.{1,100}$/.test(name)) {
        console.error('keys create needs --name NAME (1-100 characters)');
        return 2;
      }
      const { secret, record } = createApiKey(store.keys, name);
      console.error(`Created API key ${record.id} (${record.name}). It is shown only now; store it safely.`);
      process.stdout.write(`${secret}\n`);
      return 0;
    }
    if (sub === 'list') {
      for (const k of store.keys.list()) {
        const state = k.revokedAt ? `revoked ${new Date(k.revokedAt).toISOString()}` : 'active';
        console.log(`${k.id}\t${k.prefix}...\t${k.name}\t${new Date(k.createdAt).toISOString()}\t${state}`);
      }
      return 0;
    }
    if (sub === 'revoke') {
      const id = rest[0];
      if (!id) { console.error('keys revoke needs a KEY_ID (see keys list)'); return 2; }
      if (!store.keys.revoke(id, Date.now())) { console.error(`no active key with id ${id}`); return 1; }
      console.log(`revoked ${id}`);
      return 0;
    }
    if (sub === 'limit') {
      const id = rest[0];
      const current = store.keys.list().find((k) => k.id === id);
      if (!id || !current) { console.error('keys limit needs the KEY_ID of an existing key (see keys list)'); return 2; }
      const parse = (flag: string, old: number | null | undefined): number | null | Error => {
        const raw = argValue(rest, flag);
        if (raw === undefined) return old ?? null;
        if (raw === 'default') return null;
        return /^[1-9][0-9]{0,6}$/.test(raw) ? Number(raw) : new Error(`${flag} must be a whole number from 1 to 9999999 or "default", got "${raw}"`);
      };
      const submitRate = parse('--submits', current.submitRate);
      const queryRate = parse('--queries', current.queryRate);
      for (const v of [submitRate, queryRate]) if (v instanceof Error) { console.error(v.message); return 2; }
      store.keys.setRateLimits(id, { submitRate: submitRate as number | null, queryRate: queryRate as number | null });
      console.log(`${id}: submits ${submitRate ?? 'default'}/s, queries ${queryRate ?? 'default'}/s (bursts of twice that; in effect within 10 s)`);
      return 0;
    }
    console.error(USAGE);
    return 2;
  } finally {
    store.close();
  }
}

async function backup(file: string | undefined): Promise<number> {
  if (!file) { console.error('backup needs a FILE to write the copy to'); return 2; }
  if (fs.existsSync(file)) { console.error(`${file} exists; choose a new file name`); return 2; }
  const store = openStore();
  try {
    await store.backup(file);
    console.log(`database copied to ${file} (also copy results/, assets/ and signing-secret of the data directory; see docs/OPERATIONS.md)`);
    return 0;
  } finally {
    store.close();
  }
}

async function main(argv: string[]): Promise<void> {
  const [command, ...args] = argv;
  try {
    if (command === 'serve' || command === undefined) return await serve();
    if (command === 'keys') { process.exitCode = keys(args); return; }
    if (command === 'backup') { process.exitCode = await backup(args[0]); return; }
    if (command === 'build') return; // the launcher already built
    console.error(USAGE);
    process.exitCode = command === '--help' || command === 'help' ? 0 : 2;
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`mediagate: invalid setting ${err.message}`);
      process.exit(1);
    }
    throw err;
  }
}

await main(process.argv.slice(2));
