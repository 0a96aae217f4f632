/**
 * Reads and checks every row of the settings table once (G290): the first bad value stops with a
 * ConfigError naming its variable. A row that depends on others (a bound, a default) reads them
 * first, whatever their place in the table.
 */
import type { Env } from '../config-error.js';
import type { Setting, SettingContext } from './setting.js';
import { SETTINGS, type SettingName } from './table.js';

/** Each setting's value, typed by its row. */
export type SettingValues = { readonly [N in SettingName]: ReturnType<(typeof SETTINGS)[N]['read']> };

const ROWS: Readonly<Record<string, Setting<unknown>>> = SETTINGS;

export function readSettings(env: Env): SettingValues {
  const values = new Map<string, unknown>();
  const reading = new Set<string>();
  const ctx: SettingContext = {
    env,
    get(name) {
      if (values.has(name)) return values.get(name);
      const row = ROWS[name];
      if (row === undefined) throw new Error(`the settings table has no row ${name}`);
      if (reading.has(name)) throw new Error(`setting ${name} depends on itself`);
      reading.add(name);
      const value = row.read(name, env[name], ctx);
      reading.delete(name);
      values.set(name, value);
      return value;
    },
  };
  for (const name of Object.keys(ROWS)) ctx.get(name);
  return Object.fromEntries(values) as SettingValues;
}
