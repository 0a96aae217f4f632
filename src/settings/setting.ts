/**
 * One row of the settings table (`table.ts`): an environment variable with its type, default,
 * bounds and description as data. The same row reads and checks the value (a bad one is a
 * ConfigError naming the variable and the rule) and describes it in docs/reference/settings.md,
 * which `npm run docs` writes from the table (G290).
 */
import { ConfigError, type Env } from '../config-error.js';

/** What a row may ask about the others while it is read (each read once, on first use). */
export interface SettingContext {
  readonly env: Env;
  /** The value of another setting (read and checked first if it was not yet). */
  get(name: string): unknown;
}

/** A default or a bound that follows other settings: its value, and how the reference states it. */
export interface Derived<T> {
  readonly doc: string;
  readonly value: (ctx: SettingContext) => T;
}

/** How the settings reference describes a row. */
export interface SettingDoc {
  /** The kind of value, in words (`whole number of seconds`, `on or off`, `URL`). */
  readonly type: string;
  /** The value when unset or empty, in words (markdown). */
  readonly default: string;
  /** What a value must be beyond its type, in words (markdown); '' when nothing more. */
  readonly rule: string;
  /** What the setting does (markdown). */
  readonly description: string;
  /** The value is a credential: never logged, never quoted in a message. */
  readonly secret?: boolean;
  /** Read and checked by this module instead of the table (settings that form one group there). */
  readonly readBy?: string;
}

export interface Setting<T> extends SettingDoc {
  /** The section of the reference it is listed in (set by {@link group}). */
  readonly group: string;
  /** The value of `raw` (undefined or '' when unset), or a ConfigError naming `name`. */
  read(name: string, raw: string | undefined, ctx: SettingContext): T;
}

type Row<T> = Omit<Setting<T>, 'group'>;

/** Rows of one section of the reference, stamped with its title. */
export function group<const R extends Record<string, Row<unknown>>>(title: string, rows: R): { [N in keyof R]: R[N] & { group: string } } {
  return Object.fromEntries(Object.entries(rows).map(([name, row]) => [name, { ...row, group: title }])) as { [N in keyof R]: R[N] & { group: string } };
}

function resolve<T>(v: T | Derived<T>, ctx: SettingContext): T {
  return typeof v === 'object' && v !== null && 'value' in v ? v.value(ctx) : v;
}

function docOf(v: number | Derived<number>): string {
  return typeof v === 'number' ? String(v) : v.doc;
}

function isUnset(raw: string | undefined): raw is undefined | '' {
  return raw === undefined || raw === '';
}

/** Optional extra rule of a row: a message when `value` breaks it (a ConfigError naming the row), and the rule in words. */
export interface Check<T> {
  readonly doc: string;
  readonly test: (value: T, ctx: SettingContext) => string | undefined;
}

function checked<T>(name: string, value: T, ctx: SettingContext, check: Check<T> | undefined): T {
  const problem = check?.test(value, ctx);
  if (problem !== undefined) throw new ConfigError(name, problem);
  return value;
}

interface Common<T> {
  readonly description: string;
  readonly check?: Check<T>;
  readonly secret?: boolean;
}

/** A whole number between `min` and `max` (either may follow other settings). */
export function int(
  o: Common<number> & {
    default: number | Derived<number>;
    min: number | Derived<number>;
    max: number | Derived<number>;
    /** `seconds`, `bytes`...: the reference says "whole number of <unit>". */
    unit?: string;
    /** How the reference writes the default, when not as the bare number. */
    defaultDoc?: string;
  },
): Row<number> {
  return {
    type: o.unit ? `whole number of ${o.unit}` : 'whole number',
    default: o.defaultDoc ?? (typeof o.default === 'number' ? `\`${o.default}\`` : o.default.doc),
    rule: [`${docOf(o.min)} to ${docOf(o.max)}`, o.check?.doc].filter(Boolean).join('; '),
    description: o.description,
    read(name, raw, ctx) {
      if (isUnset(raw)) return checked(name, resolve(o.default, ctx), ctx, o.check);
      if (!/^\d+$/.test(raw)) throw new ConfigError(name, `must be a whole number, got "${raw}"`);
      const value = Number(raw);
      const min = resolve(o.min, ctx);
      const max = resolve(o.max, ctx);
      if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
      return checked(name, value, ctx, o.check);
    },
  };
}

const TRUE = ['1', 'true', 'on', 'yes'];
const FALSE = ['0', 'false', 'off', 'no'];

/** On or off: `1`/`true`/`on`/`yes` or `0`/`false`/`off`/`no`, any case. */
export function bool(o: Common<boolean> & { default: boolean | Derived<boolean> }): Row<boolean> {
  return {
    type: 'on or off (`1`, `true`, `on`, `yes` / `0`, `false`, `off`, `no`)',
    default: typeof o.default === 'boolean' ? (o.default ? '`1` (on)' : '`0` (off)') : o.default.doc,
    rule: o.check?.doc ?? '',
    description: o.description,
    read(name, raw, ctx) {
      if (isUnset(raw)) return checked(name, resolve(o.default, ctx), ctx, o.check);
      const lower = raw.toLowerCase();
      if (TRUE.includes(lower)) return checked(name, true, ctx, o.check);
      if (FALSE.includes(lower)) return checked(name, false, ctx, o.check);
      throw new ConfigError(name, `must be 1 or 0 (true/false, on/off), got "${raw}"`);
    },
  };
}

/** One of a few words, exactly as written. */
export function choice<const C extends readonly string[]>(choices: C, o: Common<C[number]> & { default: C[number] }): Row<C[number]> {
  const listed = `${choices.slice(0, -1).join(', ')} or ${choices[choices.length - 1]}`;
  return {
    type: `one of ${choices.map((c) => `\`${c}\``).join(', ')}`,
    default: `\`${o.default}\``,
    rule: o.check?.doc ?? '',
    description: o.description,
    read(name, raw, ctx) {
      if (isUnset(raw)) return checked(name, o.default, ctx, o.check);
      if (!choices.includes(raw)) throw new ConfigError(name, `must be ${listed}, got "${raw}"`);
      return checked(name, raw as C[number], ctx, o.check);
    },
  };
}

/** A value with a reading of its own (URLs, paths, lists): `parse` answers the value or throws a ConfigError. */
export function custom<T>(o: Omit<SettingDoc, 'readBy'> & { parse: (name: string, raw: string | undefined, ctx: SettingContext) => T }): Row<T> {
  return {
    type: o.type,
    default: o.default,
    rule: o.rule,
    description: o.description,
    ...(o.secret && { secret: true }),
    read: o.parse,
  };
}

/**
 * A setting another module reads and checks together with its group (`readBy`): the table
 * documents it, and its value here is the variable as given.
 */
export function readElsewhere(o: Omit<SettingDoc, 'readBy'> & { readBy: string }): Row<string | undefined> {
  return { ...o, read: (_name, raw) => (isUnset(raw) ? undefined : raw) };
}

/**
 * `row` applies only together with `required` (another setting): set alone it stops the start,
 * since a mistyped companion setting must not be silently ignored (G171).
 */
export function onlyWith<T>(required: string, row: Row<T>): Row<T> {
  return {
    ...row,
    rule: [row.rule, `only with \`${required}\``].filter(Boolean).join('; '),
    read(name, raw, ctx) {
      if ((raw ?? '') !== '' && (ctx.env[required] ?? '').trim() === '') throw new ConfigError(name, `only applies with ${required}, which is not set`);
      return row.read(name, raw, ctx);
    },
  };
}
