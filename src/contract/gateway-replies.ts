import { Type, type Static } from '../typebox.js';
import { Nullable } from './task-replies.js';
import { StringEnum } from './schema-helpers.js';

/**
 * The replies of the routes around the tasks (assets, account, health, provider callbacks) as
 * TypeBox schemas (G240): their builders are typed with `Static<>` of these and the routes hand
 * them to the OpenAPI document. Exact, like the task replies (`additionalProperties: false`).
 */

const closed = { additionalProperties: false } as const;

export const AssetReply = Type.Object(
  {
    id: Type.String({ description: 'Asset id; use it as assetId://{id}' }),
    object: Type.Literal('asset'),
    status: StringEnum(['approved', 'rejected'], { description: 'The review verdict; only approved assets are usable' }),
    reason: Nullable(Type.String({ description: 'Why review rejected it' })),
    kind: Nullable(StringEnum(['image', 'video', 'audio'])),
    format: Nullable(Type.String({ description: 'png, mp4, wav, ... as probed' })),
    width: Nullable(Type.Integer()),
    height: Nullable(Type.Integer()),
    duration: Nullable(Type.Number({ description: 'Seconds (video, audio)' })),
    bytes: Type.Integer({ minimum: 0 }),
    created: Type.Integer({ description: 'Unix seconds' }),
    expires_at: Type.Integer({ description: 'When the asset is removed, Unix seconds' }),
  },
  { ...closed, title: 'Asset', description: 'The asset as review found it' },
);

export const AssetDeletedReply = Type.Object(
  {
    id: Type.String(),
    object: Type.Literal('asset'),
    deleted: Type.Literal(true),
  },
  { ...closed, title: 'AssetDeleted', description: 'The asset is deleted' },
);

const Credits = (description: string) => Type.Number({ description: `${description}, credits` });
export const AccountReply = Type.Object(
  {
    account: Type.Object({ id: Type.String(), name: Type.String() }, closed),
    balance: Credits('What can still be spent: grants minus captures minus open holds'),
    held: Credits('Held by tasks and requests not settled yet'),
    spent: Credits('Captured so far'),
    usage: Type.Array(
      Type.Object(
        {
          model: Type.String(),
          settled: Type.Integer({ minimum: 0, description: 'Tasks and requests settled in the period' }),
          spent: Credits('Spent on this model in the period'),
        },
        closed,
      ),
    ),
    period: Type.Object(
      { since: Type.Integer({ description: 'Start of the period, Unix seconds' }), days: Type.Integer({ minimum: 1, maximum: 366 }) },
      closed,
    ),
  },
  { ...closed, title: 'Account', description: "The calling key's account" },
);

export const HealthReply = Type.Object({ status: Type.Literal('ok') }, { ...closed, title: 'Health', description: 'The process answers' });
export const ReadyReply = Type.Object({ status: Type.Literal('ready') }, { ...closed, title: 'Ready', description: 'Ready to take tasks' });

export const CallbackReply = Type.Object(
  {
    received: Type.Literal(true),
    outcome: StringEnum(['check_sooner', 'after_current_work', 'duplicate', 'not_waiting'], { description: 'What the delivery did to the task (G158)' }),
  },
  { ...closed, title: 'CallbackReceived', description: 'A verified delivery, taken' },
);

export type AssetReply = Static<typeof AssetReply>;
export type AssetDeletedReply = Static<typeof AssetDeletedReply>;
export type AccountReply = Static<typeof AccountReply>;
export type CallbackReply = Static<typeof CallbackReply>;
