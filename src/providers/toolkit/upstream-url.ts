import { ConfigError } from '../../config-error.js';

/**
 * An http(s) URL without credentials, query or fragment, without a trailing slash; else a ConfigError
 * of `setting` naming `where`; `keyHint` says where the key goes instead of the URL's credentials.
 */
export function checkUpstreamUrl(setting: string, where: string, raw: string, keyHint = "name the key's variable in apiKeyEnv"): string {
  let u: URL;
  try {
    u = new URL(raw.trim());
  } catch {
    throw new ConfigError(setting, `${where} must be an absolute http(s) URL, got "${raw}"`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new ConfigError(setting, `${where} must be an http(s) URL, got "${raw}"`);
  if (u.username || u.password) throw new ConfigError(setting, `${where} must not contain credentials (${keyHint})`);
  if (u.search || u.hash) throw new ConfigError(setting, `${where} must not have a query or fragment, got "${raw}"`);
  return u.toString().replace(/\/+$/, '');
}
