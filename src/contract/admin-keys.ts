import { Type, type Static } from '../typebox.js';
import { AdminList, closed, Created, OrNull, PagingQuery } from './admin-common.js';
import { StringEnum } from './schema-helpers.js';

/**
 * The keys of the admin API (G300-G308): the key record, the bodies that create and change keys, the
 * list's filters. One source for validation, the types the service and the SDK check against, and
 * the OpenAPI document.
 */

export const KEY_ROLES = ['caller', 'admin'] as const;
export const MAX_CREDITS = 999_999_999.999999;
/** The longest grace period of a rotated-out secret: 30 days (G307). */
export const MAX_GRACE_SECONDS = 2_592_000;
/** Unix seconds of 9999-12-31T23:59:59Z. */
const MAX_UNIX = 253_402_300_799;

const Role = StringEnum(KEY_ROLES, { description: '`caller` (the public API) or `admin` (the admin API only)' });
const Models = Type.Array(Type.String({ minLength: 1, maxLength: 128 }), {
  maxItems: 200,
  description:
    'Model names and `family:*` patterns (pic, clip, reel, motion, videos, model-center, chat) the key may create tasks and chat with; null: every model; []: none',
});
const ExpiresAt = Type.Integer({ minimum: 1, maximum: MAX_UNIX, description: 'When the key stops working (401 key_expired), Unix seconds; null: never' });
const WebhookUrl = Type.String({
  maxLength: 2048,
  description: "The default `callback_url` of the key's tasks (G208): an http(s) URL at a public address; null: none",
});
const Submits = Type.Integer({
  minimum: 1,
  maximum: 1_000_000,
  description: 'Submits (POST, DELETE) per second, bursts of twice that; null: MEDIAGATE_RATE_LIMIT_SUBMITS',
});
const Queries = Type.Integer({
  minimum: 1,
  maximum: 1_000_000,
  description: 'Queries (GET) per second, bursts of twice that; null: MEDIAGATE_RATE_LIMIT_QUERIES',
});
const CreditsCap = Type.Number({
  exclusiveMinimum: 0,
  maximum: MAX_CREDITS,
  description: "Spending cap: the most credits the key's tasks and chat may hold and be charged in all (at most 6 decimals); null: none",
});
const InFlight = Type.Integer({
  minimum: 1,
  maximum: 10_000_000,
  description: 'Queued and processing tasks the key may have; null: MEDIAGATE_MAX_TASKS_IN_FLIGHT',
});

export const KeyLimits = Type.Object(
  { submits: OrNull(Submits), queries: OrNull(Queries), credits: OrNull(CreditsCap), tasks_in_flight: OrNull(InFlight) },
  {
    ...closed,
    description: "The key's own limits; null: the server's default (credits: no cap)",
  },
);
export const KeyLimitsPatch = Type.Object(
  {
    submits: Type.Optional(OrNull(Submits)),
    queries: Type.Optional(OrNull(Queries)),
    credits: Type.Optional(OrNull(CreditsCap)),
    tasks_in_flight: Type.Optional(OrNull(InFlight)),
  },
  { ...closed, description: "Limits to change (absent: unchanged; null: the server's default, for credits no cap)" },
);

export const AdminKey = Type.Object(
  {
    id: Type.String(),
    object: Type.Literal('api_key'),
    name: Type.String(),
    role: Role,
    account_id: Type.String({ description: 'The account whose credits the key spends' }),
    models: OrNull(Models),
    expires_at: OrNull(ExpiresAt),
    limits: KeyLimits,
    webhook_url: OrNull(WebhookUrl),
    created: Created,
    last_used: OrNull(Type.Integer({ description: 'When the key was last used, Unix seconds, within about a minute (G308); null: never' })),
    revoked: Type.Boolean(),
    revoked_at: OrNull(Type.Integer({ description: 'When it was revoked, Unix seconds' })),
  },
  { ...closed, title: 'AdminKey', description: "An API key: never its secret or the secret's hash" },
);

const SecretField = { key: Type.String({ description: 'The secret: shown in this answer only, never again (store it now)' }) };
export const AdminKeyCreated = Type.Object(
  { ...AdminKey.properties, ...SecretField },
  { ...closed, title: 'AdminKeyCreated', description: 'The new key, with its secret shown this once' },
);
export const AdminKeyRotated = Type.Object(
  {
    ...AdminKey.properties,
    ...SecretField,
    previous_valid_until: OrNull(Type.Integer({ description: 'Until when the replaced secret is still accepted, Unix seconds; null: no longer' })),
  },
  { ...closed, title: 'AdminKeyRotated', description: 'The key with its new secret, shown this once' },
);

export const AdminKeyList = AdminList(AdminKey, 'AdminKeyList', 'keys');

export const KeyCreateBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100, description: 'A name for people (1-100 characters)' }),
    role: Type.Optional(Role),
    account_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 128,
        description: "An existing account; absent: a new account of the key's own (callers get MEDIAGATE_STARTING_CREDITS)",
      }),
    ),
    models: Type.Optional(OrNull(Models)),
    expires_at: Type.Optional(OrNull(ExpiresAt)),
    limits: Type.Optional(KeyLimitsPatch),
    webhook_url: Type.Optional(OrNull(WebhookUrl)),
  },
  { ...closed, title: 'KeyCreate' },
);

export const KeyPatchBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    models: Type.Optional(OrNull(Models)),
    expires_at: Type.Optional(OrNull(ExpiresAt)),
    limits: Type.Optional(KeyLimitsPatch),
    webhook_url: Type.Optional(OrNull(WebhookUrl)),
  },
  { ...closed, title: 'KeyPatch', description: 'The fields to change; absent fields stay. `role` and `account_id` never change (G300): make another key' },
);

export const KeyRotateBody = Type.Object(
  {
    grace_seconds: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: MAX_GRACE_SECONDS,
        description: `How long the replaced secret is still accepted, seconds (0-${MAX_GRACE_SECONDS}; default 0: not at all)`,
      }),
    ),
  },
  { ...closed, title: 'KeyRotate' },
);

export const KeyListQuerystring = Type.Object(
  {
    account_id: Type.Optional(Type.String({ maxLength: 128, description: 'Only keys of this account' })),
    role: Type.Optional(Role),
    revoked: Type.Optional(StringEnum(['true', 'false'], { description: 'Only revoked keys (true) or only active ones (false)' })),
    q: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Only keys whose name contains this text (any case)' })),
    ...PagingQuery,
  },
  closed,
);

export type AdminKey = Static<typeof AdminKey>;
export type AdminKeyCreated = Static<typeof AdminKeyCreated>;
export type AdminKeyRotated = Static<typeof AdminKeyRotated>;
export type AdminKeyList = Static<typeof AdminKeyList>;
export type KeyLimitsPatch = Static<typeof KeyLimitsPatch>;
export type KeyCreateBody = Static<typeof KeyCreateBody>;
export type KeyPatchBody = Static<typeof KeyPatchBody>;
export type KeyRotateBody = Static<typeof KeyRotateBody>;
export type KeyListQuerystring = Static<typeof KeyListQuerystring>;
