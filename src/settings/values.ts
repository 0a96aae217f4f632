/**
 * Readers of settings whose values are more than a number or a word: URLs, path prefixes, the
 * bucket's names, model routes, token rates, credit amounts. Each answers the value or throws a
 * ConfigError naming the setting and the rule (G171, G177, G196).
 */
import path from 'node:path';
import { ConfigError } from '../config-error.js';
import { parseCredits } from '../credits/money.js';
import { openFileLimit } from '../resources.js';
import type { SettingContext } from './setting.js';

/**
 * The default connection cap: three quarters of the descriptors left after 256 for the gateway's
 * own files, pipes and upstream connections, at least 64 and at most 50,000 (1,024 descriptors: 576).
 */
export function defaultMaxConnections(fileLimit = openFileLimit() ?? 1024): number {
  return Math.max(64, Math.min(50_000, Math.floor((fileLimit - 256) * 0.75)));
}

/** Another setting's value, known to be a number (a row it depends on). */
export function numberSetting(ctx: SettingContext, name: string): number {
  const value = ctx.get(name);
  if (typeof value !== 'number') throw new Error(`setting ${name} is not a number setting`);
  return value;
}

/** `MEDIAGATE_PUBLIC_URL`: an absolute http(s) URL, kept without trailing slashes; unset: `http://localhost:<PORT>`. */
export function publicUrl(name: string, raw: string | undefined, ctx: SettingContext): string {
  const value = raw || `http://localhost:${numberSetting(ctx, 'PORT')}`;
  try {
    const u = new URL(value);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('not http(s)');
  } catch {
    throw new ConfigError(name, `must be an absolute http(s) URL, got "${value}"`);
  }
  return value.replace(/\/+$/, '');
}

/** A path prefix: `''` or `/something` without a trailing slash. */
export function pathPrefix(name: string, raw: string | undefined): string {
  const value = (raw ?? '').trim();
  if (value === '' || value === '/') return '';
  if (!/^\/[A-Za-z0-9._~\-/]*[A-Za-z0-9._~-]$/.test(value) || value.includes('//')) {
    throw new ConfigError(name, `must be empty or a path like /power (no trailing slash), got "${value}"`);
  }
  return value;
}

/** `MEDIAGATE_BOOTSTRAP_KEY`: 16 to 200 printable characters without spaces; unset: undefined. */
export function bootstrapKey(name: string, raw: string | undefined): string | undefined {
  const key = raw || undefined;
  if (key !== undefined && !/^[\x21-\x7e]{16,200}$/.test(key)) throw new ConfigError(name, 'must be 16 to 200 printable characters without spaces');
  return key;
}

/** `MEDIAGATE_SIGNING_SECRET`: at least 32 characters; unset: undefined (generated into the data directory). */
export function signingSecret(name: string, raw: string | undefined): string | undefined {
  const secret = raw || undefined;
  if (secret !== undefined && secret.length < 32) throw new ConfigError(name, 'must be at least 32 characters');
  return secret;
}

/** The data directory, absolute. */
export function dataDir(_name: string, raw: string | undefined): string {
  return path.resolve(raw || './data');
}

/** `model=provider` pairs, comma-separated. */
export function modelRoutes(name: string, raw: string | undefined): Record<string, string> {
  const routes: Record<string, string> = {};
  if (!raw) return routes;
  for (const part of raw
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const m = /^([^=\s]+)=([a-z][a-z0-9_-]*)$/.exec(part);
    if (!m) throw new ConfigError(name, `entries look like model=provider, got "${part}"`);
    routes[m[1]!] = m[2]!;
  }
  return routes;
}

/** Tokens per second; `0` or `unlimited`: no limit (answered as 0). */
export function tokensPerSecond(fallback: number) {
  return (name: string, rawValue: string | undefined): number => {
    const raw = (rawValue ?? '').trim().toLowerCase();
    if (raw === '') return fallback;
    if (raw === 'unlimited') return 0;
    if (!/^\d+(\.\d+)?$/.test(raw)) throw new ConfigError(name, `must be a number of tokens per second (0 or "unlimited" for no limit), got "${rawValue}"`);
    const value = Number(raw);
    if (value > 1_000_000) throw new ConfigError(name, `must be at most 1000000, got ${value}`);
    return value;
  };
}

/** A credit amount (up to 6 decimals, at most 999,999,999.999999), as micro-credits; unset: 0. */
export function startingCredits(name: string, raw: string | undefined): number {
  const micro = raw ? parseCredits(raw) : 0;
  if (micro === undefined || micro < 0)
    throw new ConfigError(name, `must be a number of credits from 0 to 999999999.999999 (at most 6 decimals), got "${raw}"`);
  return micro;
}

/** A URL of one of these schemes (`postgres:`), without a #fragment. */
function isServiceUrl(raw: string, schemes: readonly string[]): boolean {
  try {
    const url = new URL(raw);
    return schemes.includes(url.protocol) && !url.hash;
  } catch {
    return false;
  }
}

/** A `postgres://` or `postgresql://` URL without a #fragment (what MEDIAGATE_DATABASE_URL and `migrate-store --to` take). */
export function isPostgresUrl(raw: string): boolean {
  return isServiceUrl(raw, ['postgres:', 'postgresql:']);
}

/**
 * A service URL setting: empty or unset is undefined. It may hold a password, so the message of a
 * bad value never repeats it.
 */
export function serviceUrl(schemes: readonly string[], rule: string) {
  return (name: string, rawValue: string | undefined): string | undefined => {
    const raw = (rawValue ?? '').trim();
    if (raw === '') return undefined;
    if (!isServiceUrl(raw, schemes)) throw new ConfigError(name, rule);
    return raw;
  };
}

/**
 * `MEDIAGATE_S3_BUCKET`: S3's rules (3-63 characters, lower case, digits, dots, hyphens), widened
 * to the legacy us-east-1 names (upper case, underscores, up to 255) that S3-compatible services
 * also accept. Empty or unset: undefined (no bucket).
 */
export function s3Bucket(name: string, rawValue: string | undefined): string | undefined {
  const bucket = (rawValue ?? '').trim();
  if (bucket === '') return undefined;
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{1,253}[A-Za-z0-9]$/.test(bucket) || bucket.includes('..')) {
    throw new ConfigError(name, `must be a bucket name (3-255 letters, digits, ".", "-", "_"; starting and ending with a letter or digit), got "${bucket}"`);
  }
  return bucket;
}

/** `MEDIAGATE_S3_ENDPOINT`: an http(s) URL without credentials, query or fragment, trailing slashes dropped. */
export function s3Endpoint(name: string, rawValue: string | undefined): string | undefined {
  const raw = (rawValue ?? '').trim();
  if (raw === '') return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(name, `must be an absolute http(s) URL like https://s3.example.com, got "${raw}"`);
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username || url.password || url.search || url.hash) {
    throw new ConfigError(
      name,
      'must be an absolute http(s) URL without credentials, query or fragment (credentials come from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, a profile or a role)',
    );
  }
  return raw.replace(/\/+$/, '');
}

/** `MEDIAGATE_S3_REGION`; unset: the SDK's chain, or `us-east-1` when an endpoint is given. */
export function s3Region(name: string, rawValue: string | undefined, ctx: SettingContext): string | undefined {
  const raw = (rawValue ?? '').trim();
  if (raw !== '' && !/^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$/.test(raw)) {
    throw new ConfigError(name, `must be a region name like eu-west-1 (letters, digits, "-", "_"), got "${raw}"`);
  }
  if (raw !== '') return raw;
  return ctx.get('MEDIAGATE_S3_ENDPOINT') !== undefined ? 'us-east-1' : undefined;
}

/** `MEDIAGATE_S3_PREFIX`: path segments of S3's safe characters, no `.`/`..` segment, no leading `/`; stored ending in `/`. */
export function s3Prefix(name: string, rawValue: string | undefined): string {
  const raw = (rawValue ?? '').trim();
  if (raw === '') return '';
  const prefix = raw.endsWith('/') ? raw : `${raw}/`;
  const segments = prefix.slice(0, -1).split('/');
  if (prefix.length > 512 || segments.some((seg) => !/^[A-Za-z0-9!_.*'()-]+$/.test(seg) || seg === '.' || seg === '..')) {
    throw new ConfigError(
      name,
      `must be a key prefix like mediagate or envs/prod (letters, digits and !_.*'()- in "/"-separated segments, no leading "/", empty, "." or ".." segments, at most 512 characters), got "${raw}"`,
    );
  }
  return prefix;
}
