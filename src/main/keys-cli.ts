/**
 * `mediagate keys ...` (G300-G308, G314): on the database when run on the server (audited as
 * `cli`), or through a gateway's admin API with `--url URL` and MEDIAGATE_ADMIN_KEY. Flags are
 * checked here (a usage error, exit 2, before anything is sent); the rest is the admin service's.
 */
import type { AdminKey, KeyLimits, KeyRole, KeyUpdateParams } from '../../packages/client/dist/index.js';
import { parseCredits, toCredits } from '../credits/money.js';
import { parseTimeParam } from '../tasks/task-list.js';
import { AppError } from '../errors.js';
import { ADMIN_EXIT, allPages, openTarget, reportAdminError, urlFlagOf, type AdminTarget } from './admin-target.js';
import { parse, UsageError } from './cli-args.js';

export const KEYS_USAGE = `  keys create --name NAME [--role caller|admin] [--account ACCOUNT_ID] [--models M,...] [--expires-at T]
                                create an API key spending the credits of ACCOUNT_ID (default: a new account
                                of its own); --models: model names and family:* patterns it may use; --expires-at:
                                Unix seconds or an ISO date-time; the key is printed alone on the last line
  keys list [--account ID] [--role R] [--revoked true|false] [--name TEXT]
                                list keys (ids, roles, names, accounts; never the keys)
  keys get KEY_ID               a key's record as JSON
  keys update KEY_ID [--name NAME] [--models M,...|all] [--expires-at T|never]
  keys revoke KEY_ID            revoke a key at once
  keys rotate KEY_ID [--grace SECONDS]
                                a new secret (printed alone on the last line); the old one works --grace more seconds
  keys limit KEY_ID [--submits N|default] [--queries N|default] [--credits N|none] [--tasks-in-flight N|default]
                                set a key's own rate limits (per second; bursts of twice that), spending cap
                                (credits its tasks and chat may hold and be charged in all) and in-flight bound
  keys webhook KEY_ID URL|none  set (none: clear) the webhook URL of the key's tasks whose create request names
                                no callback_url; tasks keep the URL in force at submit
  Each keys, accounts and credits command works on the database of this server, or with --url URL on the
  gateway at URL through its admin API, with the admin key in MEDIAGATE_ADMIN_KEY.`;

/** The command's flag for each field an error may name. */
const FLAGS: Record<string, string> = {
  name: '--name',
  role: '--role',
  account_id: '--account',
  models: '--models',
  expires_at: '--expires-at',
  webhook_url: 'URL',
  'limits.submits': '--submits',
  'limits.queries': '--queries',
  'limits.credits': '--credits',
  'limits.tasks_in_flight': '--tasks-in-flight',
  grace_seconds: '--grace',
};

const URL_FLAG = { url: { type: 'string' } } as const;
const iso = (seconds: number): string => new Date(seconds * 1000).toISOString();

function whole(flag: string, raw: string, min: number, max: number, keyword?: string): number | null {
  if (keyword !== undefined && raw === keyword) return null;
  if (!/^[0-9]{1,9}$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new UsageError(`${flag} must be a whole number from ${min} to ${max}${keyword ? ` or "${keyword}"` : ''}, got "${raw}"`);
  }
  return Number(raw);
}

function nameOf(raw: string | undefined, command: string): string {
  if (raw === undefined || !/^.{1,100}$/u.test(raw)) throw new UsageError(`${command} needs --name NAME (1-100 characters)`);
  return raw;
}

const modelsOf = (raw: string): string[] =>
  raw
    .split(',')
    .map((m) => m.trim())
    .filter((m) => m !== '');

function expiresOf(raw: string): number {
  try {
    return Math.floor(parseTimeParam('--expires-at', raw) / 1000);
  } catch (err) {
    if (err instanceof AppError) throw new UsageError(err.message);
    throw err;
  }
}

/** `--credits N|none`: a spending cap in credits, or null. */
function capOf(raw: string): number | null {
  if (raw === 'none') return null;
  const micro = parseCredits(raw);
  if (micro === undefined || micro <= 0)
    throw new UsageError(`--credits must be a number of credits above 0, at most 999999999.999999 (6 decimals), or "none", got "${raw}"`);
  return toCredits(micro);
}

function keyLine(k: AdminKey): string {
  const now = Date.now() / 1000;
  const state =
    k.revoked_at !== null ? `revoked ${iso(k.revoked_at)}` : k.expires_at !== null && k.expires_at <= now ? `expired ${iso(k.expires_at)}` : 'active';
  return `${k.id}\t${k.role}\t${k.name}\t${k.account_id}\t${iso(k.created)}\t${state}\twebhook ${k.webhook_url ?? 'none'}\tmodels ${k.models?.join(',') ?? 'all'}`;
}

const limitsLine = (id: string, l: KeyLimits): string =>
  `${id}: submits ${l.submits ?? 'default'}/s, queries ${l.queries ?? 'default'}/s (bursts of twice that; in effect within 10 s); ` +
  `spending cap ${l.credits === null ? 'none' : `${l.credits} credits`}; tasks in flight ${l.tasks_in_flight ?? 'default'}`;

async function run(target: AdminTarget, sub: string | undefined, rest: string[], usage: () => Promise<string>): Promise<number> {
  switch (sub) {
    case 'create': {
      const { values } = parse(
        rest,
        {
          ...URL_FLAG,
          name: { type: 'string' },
          account: { type: 'string' },
          role: { type: 'string' },
          models: { type: 'string' },
          'expires-at': { type: 'string' },
        },
        0,
      );
      const name = nameOf(values.name, 'keys create');
      if (values.role !== undefined && values.role !== 'caller' && values.role !== 'admin')
        throw new UsageError(`--role must be caller or admin, got "${values.role}"`);
      const created = await target.keys.create({
        name,
        ...(values.role !== undefined && { role: values.role as KeyRole }),
        ...(values.account !== undefined && { account_id: values.account }),
        ...(values.models !== undefined && { models: modelsOf(values.models) }),
        ...(values['expires-at'] !== undefined && { expires_at: expiresOf(values['expires-at']) }),
      });
      console.error(`Created ${created.role === 'admin' ? 'admin ' : ''}API key ${created.id} (${created.name}). It is shown only now; store it safely.`);
      process.stdout.write(`${created.key}\n`);
      return ADMIN_EXIT.ok;
    }
    case 'list': {
      const { values } = parse(
        rest,
        { ...URL_FLAG, account: { type: 'string' }, role: { type: 'string' }, revoked: { type: 'string' }, name: { type: 'string' } },
        0,
      );
      if (values.role !== undefined && values.role !== 'caller' && values.role !== 'admin')
        throw new UsageError(`--role must be caller or admin, got "${values.role}"`);
      if (values.revoked !== undefined && values.revoked !== 'true' && values.revoked !== 'false')
        throw new UsageError(`--revoked must be true or false, got "${values.revoked}"`);
      const filters = {
        ...(values.account !== undefined && { account_id: values.account }),
        ...(values.role !== undefined && { role: values.role as KeyRole }),
        ...(values.revoked !== undefined && { revoked: values.revoked === 'true' }),
        ...(values.name !== undefined && { q: values.name }),
      };
      const keys = await allPages((cursor) => target.keys.list({ ...filters, limit: 100, ...(cursor !== undefined && { cursor }) }));
      for (const k of keys.reverse()) console.log(keyLine(k)); // oldest first, as before the admin API
      return ADMIN_EXIT.ok;
    }
    case 'get': {
      const {
        positionals: [id],
      } = parse(rest, URL_FLAG, 1);
      if (!id) throw new UsageError('keys get needs a KEY_ID (see keys list)');
      console.log(JSON.stringify(await target.keys.get(id)));
      return ADMIN_EXIT.ok;
    }
    case 'update': {
      const {
        values,
        positionals: [id],
      } = parse(rest, { ...URL_FLAG, name: { type: 'string' }, models: { type: 'string' }, 'expires-at': { type: 'string' } }, 1);
      if (!id) throw new UsageError('keys update needs a KEY_ID (see keys list)');
      const patch: KeyUpdateParams = {
        ...(values.name !== undefined && { name: nameOf(values.name, 'keys update') }),
        ...(values.models !== undefined && { models: values.models === 'all' ? null : modelsOf(values.models) }),
        ...(values['expires-at'] !== undefined && { expires_at: values['expires-at'] === 'never' ? null : expiresOf(values['expires-at']) }),
      };
      if (Object.keys(patch).length === 0) throw new UsageError('keys update needs --name, --models or --expires-at');
      console.log(keyLine(await target.keys.update(id, patch)));
      return ADMIN_EXIT.ok;
    }
    case 'revoke': {
      const {
        positionals: [id],
      } = parse(rest, URL_FLAG, 1);
      if (!id) throw new UsageError('keys revoke needs a KEY_ID (see keys list)');
      await target.keys.revoke(id);
      console.log(`revoked ${id}`);
      return ADMIN_EXIT.ok;
    }
    case 'rotate': {
      const {
        values,
        positionals: [id],
      } = parse(rest, { ...URL_FLAG, grace: { type: 'string' } }, 1);
      if (!id) throw new UsageError('keys rotate needs a KEY_ID (see keys list)');
      const grace = values.grace === undefined ? 0 : whole('--grace', values.grace, 0, 2_592_000)!;
      const rotated = await target.keys.rotate(id, { grace_seconds: grace });
      console.error(
        `New secret of API key ${id}; the old one ${rotated.previous_valid_until === null ? 'no longer works' : `works until ${iso(rotated.previous_valid_until)}`}. It is shown only now; store it safely.`,
      );
      process.stdout.write(`${rotated.key}\n`);
      return ADMIN_EXIT.ok;
    }
    case 'limit': {
      const {
        values,
        positionals: [id],
      } = parse(
        rest,
        { ...URL_FLAG, submits: { type: 'string' }, queries: { type: 'string' }, credits: { type: 'string' }, 'tasks-in-flight': { type: 'string' } },
        1,
      );
      if (!id) throw new UsageError('keys limit needs a KEY_ID (see keys list)');
      const limits = {
        ...(values.submits !== undefined && { submits: whole('--submits', values.submits, 1, 1_000_000, 'default') }),
        ...(values.queries !== undefined && { queries: whole('--queries', values.queries, 1, 1_000_000, 'default') }),
        ...(values.credits !== undefined && { credits: capOf(values.credits) }),
        ...(values['tasks-in-flight'] !== undefined && { tasks_in_flight: whole('--tasks-in-flight', values['tasks-in-flight'], 1, 10_000_000, 'default') }),
      };
      const key = Object.keys(limits).length === 0 ? await target.keys.get(id) : await target.keys.update(id, { limits });
      console.log(limitsLine(id, key.limits));
      return ADMIN_EXIT.ok;
    }
    case 'webhook': {
      const {
        positionals: [id, url],
      } = parse(rest, URL_FLAG, 2);
      if (!id || url === undefined) throw new UsageError('keys webhook needs a KEY_ID and the webhook URL (or none) as arguments; --url names the gateway');
      const key = await target.keys.update(id, { webhook_url: url === 'none' ? null : url });
      console.log(`${id}: webhook ${key.webhook_url ?? 'none'} (for tasks submitted from now on)`);
      return ADMIN_EXIT.ok;
    }
    default:
      throw new UsageError(await usage());
  }
}

/** `mediagate keys ...`: answers the exit code. */
export async function keysCommand(args: string[], usage: () => Promise<string>): Promise<number> {
  const [sub, ...rest] = args;
  if (!['create', 'list', 'get', 'update', 'revoke', 'rotate', 'limit', 'webhook'].includes(sub ?? '')) throw new UsageError(await usage());
  const target = await openTarget(urlFlagOf(rest));
  try {
    return await run(target, sub, rest, usage);
  } catch (err) {
    return reportAdminError(err, FLAGS);
  } finally {
    await target.close();
  }
}
