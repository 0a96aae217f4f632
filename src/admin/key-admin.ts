/**
 * The keys of the admin API and of the `mediagate keys` commands (G300-G308): create, read, list,
 * change, revoke and rotate, each change with its audit entry in the same transaction (G302). No
 * HTTP here: the routes and the CLI call it with their actor.
 */
import { createApiKey, hashApiKey, newKeySecret, secretPrefix } from '../auth/keys.js';
import type {
  AdminKey,
  AdminKeyCreated,
  AdminKeyList,
  AdminKeyRotated,
  KeyCreateBody,
  KeyListQuerystring,
  KeyPatchBody,
  KeyRotateBody,
} from '../contract/admin-keys.js';
import { AppError, invalidField } from '../errors.js';
import type { ApiKeyRecord, CreditStore, KeyStore } from '../store/types.js';
import { auditEntry, type Actor } from './actor.js';
import { checkName, keyFieldsOf, keyPatchOf } from './key-input.js';
import { decodeCursor, filtersDigest, pageOf, parseLimit } from './paging.js';
import { keyReply } from './replies.js';

export interface KeyAdminDeps {
  keys: KeyStore;
  credits: Pick<CreditStore, 'getAccount'>;
  /** MEDIAGATE_STARTING_CREDITS: a caller key's own new account starts with it (admin keys' with nothing, G300). */
  startingMicro: number;
  allowPrivateUrls: boolean;
  now?: () => number;
  /** Writes this process's pending last-used times before keys are read (G308). */
  beforeRead?: () => Promise<void>;
}

const notFound = (id: string): AppError => new AppError('key_not_found', `No API key with id ${id}`, { param: 'id' });

export class KeyAdmin {
  private readonly now: () => number;

  constructor(private readonly deps: KeyAdminDeps) {
    this.now = deps.now ?? Date.now;
  }

  async create(body: KeyCreateBody, actor: Actor): Promise<AdminKeyCreated> {
    const now = this.now();
    const name = checkName('name', body.name);
    const fields = keyFieldsOf(body, { now, allowPrivateUrls: this.deps.allowPrivateUrls });
    if (body.account_id !== undefined && !(await this.deps.credits.getAccount(body.account_id))) {
      throw invalidField('account_id', `account_id ${body.account_id}: no such account`);
    }
    const account = body.account_id !== undefined ? { accountId: body.account_id } : { startingMicro: fields.role === 'admin' ? 0 : this.deps.startingMicro };
    const { secret, record } = await createApiKey(this.deps.keys, name, account, now, {
      fields,
      audit: (key, own) =>
        auditEntry(actor, 'key.create', key.id, { ...body, role: fields.role, account_id: key.accountId, new_account: own !== undefined }, now),
    });
    return { ...keyReply({ ...record, lastUsed: null }), key: secret };
  }

  async get(id: string): Promise<AdminKey> {
    await this.deps.beforeRead?.();
    return keyReply(await this.record(id));
  }

  async list(query: KeyListQuerystring): Promise<AdminKeyList> {
    await this.deps.beforeRead?.();
    const limit = parseLimit(query.limit);
    const filters = {
      ...(query.account_id !== undefined && { accountId: query.account_id }),
      ...(query.role !== undefined && { role: query.role }),
      ...(query.revoked !== undefined && { revoked: query.revoked === 'true' }),
      ...(query.q !== undefined && { nameContains: query.q }),
    };
    const digest = filtersDigest(['keys', filters]);
    const before = query.cursor === undefined ? undefined : decodeCursor(query.cursor, digest, ['n', 's']);
    const rows = await this.deps.keys.listPage({
      ...filters,
      ...(before && { before: { createdAt: before[0] as number, id: before[1] as string } }),
      limit: limit + 1,
    });
    const page = pageOf(rows, limit, (k) => [k.createdAt, k.id], digest);
    return { object: 'list', data: page.items.map(keyReply), has_more: page.has_more, next_cursor: page.next_cursor };
  }

  async update(id: string, body: KeyPatchBody, actor: Actor): Promise<AdminKey> {
    const now = this.now();
    const patch = keyPatchOf(body, { now, allowPrivateUrls: this.deps.allowPrivateUrls });
    if (Object.keys(patch).length === 0) return this.get(id); // nothing asked: nothing changed, nothing audited
    const updated = await this.deps.keys.update(id, patch, auditEntry(actor, 'key.update', id, { ...body }, now));
    if (!updated) throw notFound(id);
    return keyReply(updated);
  }

  /** Revokes the key; a key revoked already is answered as it is, with no second audit entry (safe to retry). */
  async revoke(id: string, actor: Actor): Promise<AdminKey> {
    const now = this.now();
    await this.deps.keys.revoke(id, now, auditEntry(actor, 'key.revoke', id, {}, now));
    return keyReply(await this.record(id));
  }

  /** A new secret; the replaced one is still accepted for `grace_seconds` (G307). */
  async rotate(id: string, body: KeyRotateBody, actor: Actor): Promise<AdminKeyRotated> {
    const now = this.now();
    const grace = body.grace_seconds ?? 0;
    const graceUntil = grace > 0 ? now + grace * 1000 : null;
    const secret = newKeySecret();
    const rotated = await this.deps.keys.rotate(
      id,
      { hash: hashApiKey(secret), prefix: secretPrefix(secret) },
      graceUntil,
      now,
      auditEntry(actor, 'key.rotate', id, { grace_seconds: grace }, now),
    );
    const record = await this.record(id);
    if (!rotated) throw new AppError('key_revoked', `API key ${id} is revoked: it cannot get a new secret (make a new key)`, { param: 'id' });
    return { ...keyReply(record), key: secret, previous_valid_until: graceUntil === null ? null : Math.floor(graceUntil / 1000) };
  }

  private async record(id: string): Promise<ApiKeyRecord> {
    const key = await this.deps.keys.get(id);
    if (!key) throw notFound(id);
    return key;
  }
}
