/**
 * The settings as the operator sets them (G447): one entry per environment variable of the table,
 * in the table's order, with its section, the value in force (the default when unset) and whether
 * the environment set it. What `GET /admin/v1/settings` answers as `variables`, redacted there
 * (admin/settings-view.ts); the client commands' own variables are left out (the server never reads them).
 */
import type { Env } from '../config-error.js';
import type { Setting } from './setting.js';
import { CLIENT_GROUP, SETTINGS } from './table.js';

export interface SettingVariable {
  /** The environment variable, e.g. `MEDIAGATE_BODY_LIMIT`. */
  readonly name: string;
  /** Its section of the settings reference, e.g. `Server`. */
  readonly group: string;
  /** The value in force as read (a number, a URL ...), `undefined` when unset and without default. */
  readonly value: unknown;
  /** Whether the environment gave it a value (else the default applies). */
  readonly set: boolean;
  /** The row is a credential: its value is never shown. */
  readonly secret: boolean;
}

const ROWS: Readonly<Record<string, Setting<unknown>>> = SETTINGS;

/** Every server setting's variable with its value in `values` (as `readSettings` answered for `env`). */
export function settingVariables(env: Env, values: Readonly<Record<string, unknown>>): SettingVariable[] {
  return Object.entries(ROWS)
    .filter(([, row]) => row.group !== CLIENT_GROUP)
    .map(([name, row]) => ({ name, group: row.group, value: values[name], set: (env[name] ?? '') !== '', secret: row.secret === true }));
}
