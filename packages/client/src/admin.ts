/**
 * `AdminClient`: the gateway's admin API (`/admin/v1/*`) with an admin key: keys, accounts and
 * credits, the audit log and the effective settings, every tenant's tasks, the channels, usage. Errors are the same classes as `Mediagate`'s
 * (a caller key here: `AdminOnlyError`).
 */
import type {
  AccountListParams,
  AdminAccount,
  AdminAuditEntry,
  AdminGrant,
  AdminKey,
  AdminKeyCreated,
  AdminKeyRotated,
  AdminLedgerEntry,
  AdminList,
  AdminSettings,
  AuditParams,
  GrantParams,
  KeyCreateParams,
  KeyListParams,
  KeyRotateParams,
  KeyUpdateParams,
  LedgerParams,
  AdminChannel,
  AdminChannelProbe,
  AdminTask,
  AdminTaskDetail,
  AdminTaskActivity,
  AdminTaskListParams,
  AdminUsage,
  TaskActivityParams,
  UsageParams,
} from './admin-types.js';
import { call, type CallOptions, checkGatewayUrl, type FetchLike, type HttpOptions } from './http.js';

export interface AdminClientOptions {
  /** The gateway's public URL, e.g. `https://media.example.com`. */
  baseUrl: string;
  /** An admin key (`mediagate keys create --role admin`, or MEDIAGATE_BOOTSTRAP_ADMIN_KEY). */
  apiKey: string;
  fetch?: FetchLike;
  /** Per request, ms; default 60 000; 0: none. */
  timeoutMs?: number;
}

type Signal = { signal?: AbortSignal };
const enc = encodeURIComponent;

/** The query string of `params` (lists joined by commas; undefined left out). */
function query(params: object): string {
  const q = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined) q.set(name, Array.isArray(value) ? value.join(',') : String(value));
  }
  const text = q.toString();
  return text ? `?${text}` : '';
}

/** Every item of a list, page after page. */
async function* pages<T, P extends object>(list: (params: P & { cursor?: string }) => Promise<AdminList<T>>, params: P): AsyncGenerator<T, void, undefined> {
  let cursor: string | undefined;
  for (;;) {
    const page = await list({ ...params, ...(cursor !== undefined && { cursor }) });
    yield* page.data;
    if (!page.has_more || page.next_cursor === null) return;
    cursor = page.next_cursor;
  }
}

class AdminResource {
  constructor(
    protected readonly http: HttpOptions,
    protected readonly base: string,
  ) {}

  protected call<T>(path: string, options: CallOptions = {}): Promise<T> {
    return call<T>(this.http, `${this.base}/admin/v1${path}`, options);
  }
}

/** `/admin/v1/keys`. */
export class AdminKeys extends AdminResource {
  list(params: KeyListParams = {}, options: Signal = {}): Promise<AdminList<AdminKey>> {
    return this.call(`/keys${query(params)}`, options);
  }

  iterate(params: Omit<KeyListParams, 'cursor'> = {}, options: Signal = {}): AsyncGenerator<AdminKey, void, undefined> {
    return pages((p) => this.list(p, options), params);
  }

  /** A new key; its secret (`key`) is in this answer only. */
  create(params: KeyCreateParams, options: Signal = {}): Promise<AdminKeyCreated> {
    return this.call('/keys', { method: 'POST', body: params, ...options });
  }

  get(id: string, options: Signal = {}): Promise<AdminKey> {
    return this.call(`/keys/${enc(id)}`, options);
  }

  update(id: string, params: KeyUpdateParams, options: Signal = {}): Promise<AdminKey> {
    return this.call(`/keys/${enc(id)}`, { method: 'PATCH', body: params, ...options });
  }

  /** Revokes at once; a revoked key is answered as it is. */
  revoke(id: string, options: Signal = {}): Promise<AdminKey> {
    return this.call(`/keys/${enc(id)}/revoke`, { method: 'POST', ...options });
  }

  /** A new secret (this answer only); the old one is accepted for `grace_seconds` more. */
  rotate(id: string, params: KeyRotateParams = {}, options: Signal = {}): Promise<AdminKeyRotated> {
    return this.call(`/keys/${enc(id)}/rotate`, { method: 'POST', body: params, ...options });
  }
}

/** `/admin/v1/accounts`, grants and the ledger. */
export class AdminAccounts extends AdminResource {
  list(params: AccountListParams = {}, options: Signal = {}): Promise<AdminList<AdminAccount>> {
    return this.call(`/accounts${query(params)}`, options);
  }

  iterate(params: Omit<AccountListParams, 'cursor'> = {}, options: Signal = {}): AsyncGenerator<AdminAccount, void, undefined> {
    return pages((p) => this.list(p, options), params);
  }

  /** A new account, with the gateway's starting credit. */
  create(params: { name: string }, options: Signal = {}): Promise<AdminAccount> {
    return this.call('/accounts', { method: 'POST', body: params, ...options });
  }

  get(id: string, options: Signal = {}): Promise<AdminAccount> {
    return this.call(`/accounts/${enc(id)}`, options);
  }

  /** Adds credits (negative: takes back at most what is available; more is a ConflictError). */
  grant(id: string, params: GrantParams, options: Signal = {}): Promise<AdminGrant> {
    return this.call(`/accounts/${enc(id)}/grants`, { method: 'POST', body: params, ...options });
  }

  /** One page of the account's ledger, newest first. */
  ledger(id: string, params: LedgerParams = {}, options: Signal = {}): Promise<AdminList<AdminLedgerEntry>> {
    return this.call(`/accounts/${enc(id)}/ledger${query(params)}`, options);
  }

  iterateLedger(id: string, params: Omit<LedgerParams, 'cursor'> = {}, options: Signal = {}): AsyncGenerator<AdminLedgerEntry, void, undefined> {
    return pages((p) => this.ledger(id, p, options), params);
  }
}

/** `GET /admin/v1/audit`. */
export class AdminAudit extends AdminResource {
  list(params: AuditParams = {}, options: Signal = {}): Promise<AdminList<AdminAuditEntry>> {
    return this.call(`/audit${query(params)}`, options);
  }

  iterate(params: Omit<AuditParams, 'cursor'> = {}, options: Signal = {}): AsyncGenerator<AdminAuditEntry, void, undefined> {
    return pages((p) => this.list(p, options), params);
  }
}

/** `/admin/v1/tasks`: every tenant's tasks. */
export class AdminTasks extends AdminResource {
  list(params: AdminTaskListParams = {}, options: Signal = {}): Promise<AdminList<AdminTask>> {
    return this.call(`/tasks${query(params)}`, options);
  }

  iterate(params: Omit<AdminTaskListParams, 'cursor'> = {}, options: Signal = {}): AsyncGenerator<AdminTask, void, undefined> {
    return pages((p) => this.list(p, options), params);
  }

  /** The task with its attempts, upstream, hold, webhook deliveries and timeline. */
  get(id: string, options: Signal = {}): Promise<AdminTaskDetail> {
    return this.call(`/tasks/${enc(id)}`, options);
  }

  /** Cancels a queued task, or a processing one whose provider can stop it (else a ConflictError). */
  cancel(id: string, options: Signal = {}): Promise<AdminTaskDetail> {
    return this.call(`/tasks/${enc(id)}/cancel`, { method: 'POST', ...options });
  }
}

/** `/admin/v1/channels`: the providers across the cluster, and their probes. */
export class AdminChannels extends AdminResource {
  async list(options: Signal = {}): Promise<AdminChannel[]> {
    return (await this.call<{ object: 'list'; data: AdminChannel[] }>('/channels', options)).data;
  }

  /** A cheap call that shows the upstream answers with the configured key (never a generation). */
  probe(id: string, options: Signal = {}): Promise<AdminChannelProbe> {
    return this.call(`/channels/${enc(id)}/probe`, { method: 'POST', ...options });
  }
}

/** A client of one gateway's admin API with one admin key. */
export class AdminClient {
  readonly keys: AdminKeys;
  readonly accounts: AdminAccounts;
  readonly audit: AdminAudit;
  readonly tasks: AdminTasks;
  readonly channels: AdminChannels;
  private readonly http: HttpOptions;
  private readonly base: string;

  constructor(options: AdminClientOptions) {
    if (!options.baseUrl) throw new TypeError('AdminClient: baseUrl is required');
    if (!options.apiKey) throw new TypeError('AdminClient: apiKey is required');
    // not echoed: fetch's own error for such a header value would print the whole key
    if (!/^[\x21-\x7e]+$/.test(options.apiKey.trim())) throw new TypeError('AdminClient: apiKey holds spaces, line breaks or other characters no API key has');
    checkGatewayUrl('AdminClient', 'baseUrl', options.baseUrl);
    this.base = options.baseUrl.replace(/\/+$/, '');
    this.http = {
      apiKey: options.apiKey.trim(),
      fetch: options.fetch ?? ((input, init) => globalThis.fetch(input, init)),
      timeoutMs: options.timeoutMs ?? 60_000,
    };
    this.keys = new AdminKeys(this.http, this.base);
    this.accounts = new AdminAccounts(this.http, this.base);
    this.audit = new AdminAudit(this.http, this.base);
    this.tasks = new AdminTasks(this.http, this.base);
    this.channels = new AdminChannels(this.http, this.base);
  }

  /** Tasks, video seconds, images, chat tokens and credits per bucket and group. */
  usage(params: UsageParams = {}, options: Signal = {}): Promise<AdminUsage> {
    return call(this.http, `${this.base}/admin/v1/usage${query(params)}`, options);
  }

  /** Tasks per minute by status: submitted, and each status entered, the last hour by default (G370). */
  taskActivity(params: TaskActivityParams = {}, options: Signal = {}): Promise<AdminTaskActivity> {
    return call(this.http, `${this.base}/admin/v1/task-activity${query(params)}`, options);
  }

  /** The effective configuration of the answering gateway process, secrets redacted. */
  settings(options: Signal = {}): Promise<AdminSettings> {
    return call(this.http, `${this.base}/admin/v1/settings`, options);
  }
}
