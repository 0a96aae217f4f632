/** The admin service layer (G300-G311), built once per process by main/gateway.ts and by the CLI on the server. */
import type { SettingsConfig } from '../settings-config.js';
import type { AdminStore, AuditStore, Store } from '../store/types.js';
import { AccountAdmin } from './account-admin.js';
import { ChannelAdmin, type ChannelAdminDeps } from './channel-admin.js';
import { KeyAdmin } from './key-admin.js';
import { settingsView, type SettingVariableView } from './settings-view.js';
import { TaskAdmin, type TaskAdminDeps } from './task-admin.js';

export type { AdminStore } from '../store/types.js';

export interface AdminServices {
  keys: KeyAdmin;
  accounts: AccountAdmin;
  audit: AuditStore;
  /** The cross-tenant reads and the usage aggregates (G317-G324). */
  store: AdminStore;
  now: () => number;
  /** The effective configuration, secrets redacted (G311), and each setting by its environment variable (G447). */
  settings(): { settings: Record<string, unknown>; variables: SettingVariableView[] };
  /** Every tenant's tasks (G317-G320): in a gateway process only (not the CLI). */
  tasks?: TaskAdmin;
  /** The channels (G322, G323): in a gateway process only. */
  channels?: ChannelAdmin;
}

export interface AdminServiceOptions {
  now?: () => number;
  /** Writes this process's pending last-used times (G308) before keys are read. */
  flushKeyUsage?: () => Promise<void>;
  /** What a gateway process adds: the task service, the providers, the reply links (G317-G320). */
  runtime?: Pick<TaskAdminDeps, 'tasks' | 'providers' | 'typeOf' | 'links'> & Pick<ChannelAdminDeps, 'routes' | 'stats'>;
}

export function createAdminServices(
  config: SettingsConfig,
  store: Pick<Store, 'keys' | 'credits' | 'audit' | 'admin' | 'webhooks'>,
  options: AdminServiceOptions = {},
): AdminServices {
  const startingMicro = config.credits.startingMicro;
  const now = options.now === undefined ? {} : { now: options.now };
  return {
    keys: new KeyAdmin({
      keys: store.keys,
      credits: store.credits,
      startingMicro,
      allowPrivateUrls: config.allowPrivateUrls,
      ...now,
      ...(options.flushKeyUsage && { beforeRead: options.flushKeyUsage }),
    }),
    accounts: new AccountAdmin({ credits: store.credits, startingMicro, ...now }),
    audit: store.audit,
    store: store.admin,
    now: options.now ?? Date.now,
    settings: () => settingsView(config),
    ...(options.runtime && {
      tasks: new TaskAdmin({ ...options.runtime, admin: store.admin, keys: store.keys, webhooks: store.webhooks, audit: store.audit, ...now }),
      channels: new ChannelAdmin({ ...options.runtime, admin: store.admin, audit: store.audit, ...now }),
    }),
  };
}
