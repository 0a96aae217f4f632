/**
 * The rules of a key's fields beyond their schema (G300-G306), each a 400 naming the field: names
 * without control characters, allow-lists of known models and family patterns, an expiry in the
 * future, a spending cap of at most 6 decimals, a webhook URL by the caller-URL rule (G208).
 */
import { MODEL_FAMILIES } from '../auth/key-rules.js';
import type { KeyFields } from '../auth/keys.js';
import type { KeyCreateBody, KeyLimitsPatch, KeyPatchBody } from '../contract/admin-keys.js';
import { MODELS } from '../contract/catalog.js';
import { CHAT_MODELS } from '../contract/chat.js';
import { parseCredits } from '../credits/money.js';
import { invalidField } from '../errors.js';
import type { KeyPatch } from '../store/types.js';
import { checkCallbackUrl } from '../webhooks/callback-url.js';

const KNOWN_MODELS = new Set<string>([...MODELS.map((m) => m.id), ...CHAT_MODELS]);
const PATTERNS = new Set(MODEL_FAMILIES.map((f) => `${f}:*`));

export interface KeyInputRules {
  /** Now, Unix ms: an expiry must come after it. */
  now: number;
  /** MEDIAGATE_ALLOW_PRIVATE_URLS: webhook URLs may name private addresses. */
  allowPrivateUrls: boolean;
}

/** A name for people: 1-100 characters (the schema), none of them a control character. */
export function checkName(field: string, name: string): string {
  // unpaired surrogates are refused with the body (http/body-bounds.ts, G110)
  if (/\p{Cc}/u.test(name)) throw invalidField(field, `${field} must not contain control characters`);
  return name;
}

/** An allow-list: every entry a model of this gateway or `<family>:*`; repeats dropped. */
export function checkModels(models: readonly string[] | null): string[] | null {
  if (models === null) return null;
  models.forEach((m, i) => {
    if (!KNOWN_MODELS.has(m) && !PATTERNS.has(m)) {
      throw invalidField(
        `models[${i}]`,
        `models[${i}] must be a model of this gateway or a family pattern (${[...PATTERNS].join(', ')}); got "${m.slice(0, 128)}"`,
      );
    }
  });
  return [...new Set(models)];
}

/** Unix seconds in, Unix ms out; null stays null. */
export function checkExpiresAt(expiresAt: number | null, now: number): number | null {
  if (expiresAt === null) return null;
  if (expiresAt * 1000 <= now)
    throw invalidField('expires_at', `expires_at must be in the future (Unix seconds after ${Math.floor(now / 1000)}; got ${expiresAt})`);
  return expiresAt * 1000;
}

/** A spending cap in credits as micro-credits. */
function capMicro(credits: number | null): number | null {
  if (credits === null) return null;
  const micro = parseCredits(String(credits));
  if (micro === undefined || micro <= 0)
    throw invalidField('limits.credits', `limits.credits must be a number of credits above 0 with at most 6 decimals (got ${credits})`);
  return micro;
}

/** The store fields of a `limits` object: absent fields stay absent. */
function limitsOf(limits: KeyLimitsPatch | undefined): KeyPatch {
  if (!limits) return {};
  return {
    ...(limits.submits !== undefined && { submitRate: limits.submits }),
    ...(limits.queries !== undefined && { queryRate: limits.queries }),
    ...(limits.credits !== undefined && { spendCapMicro: capMicro(limits.credits) }),
    ...(limits.tasks_in_flight !== undefined && { maxInFlight: limits.tasks_in_flight }),
  };
}

/** The fields a create or a change asks for, checked, as the store keeps them (absent: not asked). */
export function keyPatchOf(body: KeyPatchBody, rules: KeyInputRules): KeyPatch {
  return {
    ...(body.name !== undefined && { name: checkName('name', body.name) }),
    ...(body.models !== undefined && { models: checkModels(body.models) }),
    ...(body.expires_at !== undefined && { expiresAt: checkExpiresAt(body.expires_at, rules.now) }),
    ...limitsOf(body.limits),
    ...(body.webhook_url !== undefined && {
      webhookUrl: body.webhook_url === null ? null : checkCallbackUrl(body.webhook_url, rules.allowPrivateUrls, 'webhook_url'),
    }),
  };
}

/** A new key's fields besides its name and account. */
export function keyFieldsOf(body: KeyCreateBody, rules: KeyInputRules): KeyFields {
  const { name: _name, ...fields } = keyPatchOf(body, rules);
  return { ...fields, role: body.role ?? 'caller' };
}
