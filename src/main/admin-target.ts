/**
 * Where the `mediagate keys|accounts|credits` commands make their changes (G314): through the admin
 * API of a gateway (`--url URL`, the admin key in MEDIAGATE_ADMIN_KEY), or on the database directly
 * when run on the server, through the same admin services the API uses, audited as `cli`. Both
 * answer the admin API's shapes, so every command prints the same either way.
 */
import {
  AdminClient,
  ConnectionError,
  MediagateError,
  TimeoutError,
  type AccountListParams,
  type AdminAccount,
  type AdminGrant,
  type AdminKey,
  type AdminKeyCreated,
  type AdminKeyRotated,
  type AdminLedgerEntry,
  type AdminList,
  type GrantParams,
  type KeyCreateParams,
  type KeyListParams,
  type KeyRotateParams,
  type KeyUpdateParams,
  type LedgerParams,
} from '../../packages/client/dist/index.js';
import { CLI_ACTOR } from '../admin/actor.js';
import { createAdminServices } from '../admin/services.js';
import { loadSettingsConfig } from '../settings-config.js';
import { AppError } from '../errors.js';
import { createStore } from '../store/create-store.js';
import { UsageError, urlExtras } from './cli-args.js';

/** The operations the commands use, in the admin API's shapes (`AdminClient` has each of them). */
export interface AdminTarget {
  keys: {
    list(params?: KeyListParams): Promise<AdminList<AdminKey>>;
    create(params: KeyCreateParams): Promise<AdminKeyCreated>;
    get(id: string): Promise<AdminKey>;
    update(id: string, params: KeyUpdateParams): Promise<AdminKey>;
    revoke(id: string): Promise<AdminKey>;
    rotate(id: string, params?: KeyRotateParams): Promise<AdminKeyRotated>;
  };
  accounts: {
    list(params?: AccountListParams): Promise<AdminList<AdminAccount>>;
    create(params: { name: string }): Promise<AdminAccount>;
    get(id: string): Promise<AdminAccount>;
    grant(id: string, params: GrantParams): Promise<AdminGrant>;
    ledger(id: string, params?: LedgerParams): Promise<AdminList<AdminLedgerEntry>>;
  };
  /** Where the changes go, for messages: the gateway's URL, or `the database`. */
  where: string;
  close(): Promise<void>;
}

const stringsOf = (params: object): Record<string, string> =>
  Object.fromEntries(
    Object.entries(params)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => [k, Array.isArray(v) ? v.join(',') : String(v)]),
  );

/** The admin API at `url`, with the key in MEDIAGATE_ADMIN_KEY. */
function remoteTarget(url: string): AdminTarget {
  const extras = urlExtras(url);
  if (extras) throw new UsageError(`--url holds ${extras}, which no request may carry; give the gateway's URL without them`);
  if (!/^https?:\/\/[^/\s]+/.test(url)) throw new UsageError(`--url must be the gateway's http(s) URL, such as https://media.example.com (got "${url}")`);
  const key = process.env.MEDIAGATE_ADMIN_KEY;
  if (!key)
    throw new UsageError(
      '--url needs an admin key in MEDIAGATE_ADMIN_KEY (mediagate keys create --role admin on the server, or MEDIAGATE_BOOTSTRAP_ADMIN_KEY)',
    );
  // never echoed: fetch's own error would print the whole header, the key in it
  if (!/^[\x21-\x7e]+$/.test(key.trim()))
    throw new UsageError('MEDIAGATE_ADMIN_KEY holds spaces, line breaks or other characters no API key has: set it to one key');
  const client = new AdminClient({ baseUrl: url, apiKey: key });
  return { keys: client.keys, accounts: client.accounts, where: url, close: async () => undefined };
}

/** The database of this server's settings, through the admin services (actor `cli`). */
async function localTarget(): Promise<AdminTarget> {
  const config = loadSettingsConfig();
  const store = await createStore(config);
  const admin = createAdminServices(config, store);
  return {
    keys: {
      list: (p = {}) => admin.keys.list(stringsOf(p)),
      create: (p) => admin.keys.create(p, CLI_ACTOR),
      get: (id) => admin.keys.get(id),
      update: (id, p) => admin.keys.update(id, p, CLI_ACTOR),
      revoke: (id) => admin.keys.revoke(id, CLI_ACTOR),
      rotate: (id, p = {}) => admin.keys.rotate(id, p, CLI_ACTOR),
    },
    accounts: {
      list: (p = {}) => admin.accounts.list(stringsOf(p)),
      create: (p) => admin.accounts.create(p, CLI_ACTOR),
      get: (id) => admin.accounts.get(id),
      grant: (id, p) => admin.accounts.grant(id, p, CLI_ACTOR),
      ledger: (id, p = {}) => admin.accounts.ledger(id, stringsOf(p)),
    },
    where: 'the database',
    close: () => store.close(),
  };
}

/** The value of `--url` (`--url X` or `--url=X`) among a command's arguments, before they are parsed. */
export function urlFlagOf(args: readonly string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--url') return args[i + 1] ?? '';
    if (args[i]!.startsWith('--url=')) return args[i]!.slice('--url='.length);
  }
  return undefined;
}

/** The target of a command: the gateway at `url`, else the database. */
export function openTarget(url: string | undefined): Promise<AdminTarget> {
  return url === undefined ? localTarget() : Promise.resolve(remoteTarget(url));
}

/** Every item of a list, page after page. */
export async function allPages<T>(list: (cursor: string | undefined) => Promise<{ data: T[]; has_more: boolean; next_cursor: string | null }>): Promise<T[]> {
  const out: T[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await list(cursor);
    out.push(...page.data);
    if (!page.has_more || page.next_cursor === null) return out;
    cursor = page.next_cursor;
  }
}

/** Exit codes of the admin commands (G314): done; refused (bad input, unknown id, a conflict); usage; the gateway or the network failed. */
export const ADMIN_EXIT = { ok: 0, refused: 1, usage: 2, failed: 5 } as const;

/**
 * What an operator may do about a refused private address (G485): a command on the store checks
 * it with its own environment, a command through `--url` with the gateway's. Said to operators
 * only: a caller's refusal does not name the gateway's settings.
 */
const PRIVATE_HERE = ' (this command checks addresses itself: MEDIAGATE_ALLOW_PRIVATE_URLS=1 in its environment allows private ones)';
const PRIVATE_THERE = " (the gateway's MEDIAGATE_ALLOW_PRIVATE_URLS=1 allows private ones)";

/**
 * Reports a failed admin command on stderr and answers its exit code: the field an error names is
 * shown as the command's flag for it (`account_id` -> `--account`). Anything else is thrown on.
 */
export function reportAdminError(err: unknown, flags: Record<string, string> = {}): number {
  const say = (param: string | null, message: string): void => {
    const flag = param === null ? undefined : (flags[param] ?? flags[param.replace(/\[\d+\]$/, '')]);
    process.stderr.write(`${flag !== undefined && param !== null && message.startsWith(param) ? `${flag}${message.slice(param.length)}` : message}\n`);
  };
  if (err instanceof AppError) {
    say(err.param ?? null, `${err.message}${err.code === 'url_not_allowed' ? PRIVATE_HERE : ''}`);
    return err.status >= 500 ? ADMIN_EXIT.failed : ADMIN_EXIT.refused;
  }
  if (err instanceof MediagateError) {
    const body = err.body;
    const message = typeof body === 'object' && 'error' in body ? body.error.message : err.message;
    say(err.param, `${message}${err.code === 'url_not_allowed' ? PRIVATE_THERE : ''}${err.requestId ? ` (request id ${err.requestId})` : ''}`);
    return err.status >= 500 ? ADMIN_EXIT.failed : ADMIN_EXIT.refused;
  }
  if (err instanceof ConnectionError || err instanceof TimeoutError) {
    process.stderr.write(`mediagate: ${err.message}\n`);
    return ADMIN_EXIT.failed;
  }
  throw err;
}
