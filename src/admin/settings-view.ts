import type { SettingsConfig } from '../settings-config.js';

/**
 * `GET /admin/v1/settings` (G311, G447): the effective configuration as JSON with every secret replaced
 * by {@link REDACTED}, and each setting by its environment variable (secret rows redacted as well). Redaction is by shape, so a setting added later is covered without a list
 * to keep: any field named like a secret (`...Key`, `key`, `...secret...`, `...token...` but not `...tokens...`,
 * `...password...`, `...credential...`, `authorization`) whatever its value; every value of a
 * `headers` map; and in any string that is a URL, its password and the values of query
 * parameters named like a secret. Sets and maps become arrays and objects; functions are left out.
 */
export const REDACTED = '[redacted]';

// `token` but not `tokens`: counts of model tokens (`chatHoldTokens`, `sandboxChatTokensPerSecond`) are no secret
const SECRET_NAME = /(^key$|Key$|secret|token(?!s)|password|passphrase|credential|authorization|^auth$)/i;
const SECRET_PARAM = /(key|secret|token|password|passwd|pwd|sig|signature|credential|auth)/i;
const URL_LIKE = /^[a-z][a-z0-9+.-]*:\/\//i;

/** A URL with its password and its secret-named query values redacted; any other text as it is. */
function redactUrl(text: string): string {
  if (!URL_LIKE.test(text)) return text;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return text;
  }
  if (!url.password && !url.username && ![...url.searchParams.keys()].some((k) => SECRET_PARAM.test(k))) return text;
  if (url.password) url.password = REDACTED;
  else if (url.username) url.username = REDACTED; // a user name alone in a URL is a token's place (https://TOKEN@host)
  for (const k of [...url.searchParams.keys()]) if (SECRET_PARAM.test(k)) url.searchParams.set(k, REDACTED);
  return url.toString();
}

function view(value: unknown, name: string, depth: number): unknown {
  if (value === undefined || typeof value === 'function') return undefined;
  if (value === null) return null;
  if (SECRET_NAME.test(name) && !/(Setting|Env)$/.test(name)) return REDACTED;
  if (typeof value === 'string') return redactUrl(value);
  if (typeof value !== 'object') return value;
  if (depth > 20) return REDACTED; // no configuration nests this deep: refuse to walk a cycle
  if (value instanceof Set || Array.isArray(value)) return [...(value as Iterable<unknown>)].map((v) => view(v, name, depth + 1));
  const entries = value instanceof Map ? [...value].map(([k, v]) => [String(k), v] as const) : Object.entries(value);
  if (/headers$/i.test(name)) return Object.fromEntries(entries.map(([k]) => [k, REDACTED]));
  const out: Record<string, unknown> = {};
  for (const [k, v] of entries) {
    const shown = view(v, k, depth + 1);
    if (shown !== undefined) out[k] = shown;
  }
  return out;
}

/** A setting by its environment variable, as the admin API shows it (G447). */
export interface SettingVariableView {
  name: string;
  group: string;
  /** The value in force, JSON-ready; `null` when unset and without default; a secret's `[redacted]` (a URL keeps all but its credentials). */
  value: unknown;
  set: boolean;
}

/** The configuration as JSON-ready data with every secret redacted: as the process holds it, and by environment variable. */
export function settingsView(config: SettingsConfig): { settings: Record<string, unknown>; variables: SettingVariableView[] } {
  const { variables, ...rest } = config;
  return {
    settings: view(rest, '', 0) as Record<string, unknown>,
    variables: variables.map((v) => ({
      name: v.name,
      group: v.group,
      value:
        v.value === undefined
          ? null
          : v.secret
            ? typeof v.value === 'string' && URL_LIKE.test(v.value)
              ? redactUrl(v.value)
              : REDACTED
            : (view(v.value, v.name, 0) ?? null),
      set: v.set,
    })),
  };
}
