import { Type, type Static } from '../typebox.js';
import { closed } from './admin-common.js';
import { StringEnum } from './schema-helpers.js';
import { Nullable } from './task-replies.js';

/** The channels (providers) of the admin API (G322, G323): seen across the cluster, and probed. */

const Window = (span: string) =>
  Type.Object(
    {
      calls: Type.Integer({ description: `Calls in the last ${span}, every process` }),
      ok: Type.Integer({ description: 'Answered' }),
      faults: Type.Integer({ description: 'Channel faults: refused, reset, timed out, 401/402/403, 429, 5xx' }),
      errors: Type.Integer({ description: "Failed for another reason (the request's own fault)" }),
      refused: Type.Integer({ description: 'Not sent: the circuit was open' }),
      latency_ms: Nullable(Type.Number({ description: 'The mean length of the calls that went out, ms; null when none did' })),
    },
    closed,
  );

export const AdminChannel = Type.Object(
  {
    id: Type.String({ description: 'The provider (channel) id' }),
    object: Type.Literal('channel'),
    type: Nullable(Type.String({ description: 'Its type (providers.json `type`: relay, fal, ...); null for a provider of no known type' })),
    families: Type.Array(Type.String(), { description: 'What it serves' }),
    cancel: Type.Boolean({ description: 'Whether it can stop a generation' }),
    routes: Type.Array(
      Type.Object(
        {
          model: Type.String({ description: 'A model whose route has this channel as a candidate (`*`: every model without a route)' }),
          upstream_model: Nullable(Type.String({ description: "The model's name at this channel, where it differs" })),
          priority: Type.Integer(),
          weight: Type.Number(),
        },
        closed,
      ),
    ),
    circuit: Type.Object(
      {
        state: StringEnum(['closed', 'open', 'half-open'] as const, { description: 'As last changed by any process' }),
        since: Nullable(Type.Integer({ description: 'When it changed to this state, Unix seconds; null: never changed' })),
      },
      closed,
    ),
    in_flight: Type.Integer({ description: 'Tasks processing at it now, every process' }),
    last_5m: Window('5 minutes'),
    last_hour: Window('hour'),
    last_error: Nullable(
      Type.Object(
        {
          message: Type.String({ description: 'Scrubbed: no keys, tokens or query strings; at most 300 characters' }),
          at: Type.Integer({ description: 'Unix seconds' }),
        },
        closed,
      ),
    ),
  },
  { ...closed, title: 'AdminChannel', description: 'A provider (channel) with its circuit, load and recent outcomes across the cluster' },
);

export const AdminChannelList = Type.Object(
  {
    object: Type.Literal('list'),
    data: Type.Array(AdminChannel, { description: 'Every provider, in id order' }),
  },
  { ...closed, title: 'AdminChannelList', description: 'Every provider (channel), seen across the cluster' },
);

export const AdminChannelProbe = Type.Object(
  {
    object: Type.Literal('channel_probe'),
    channel: Type.String(),
    ok: Type.Boolean({ description: 'Whether the upstream answered the call with the configured key' }),
    call: Nullable(Type.String({ description: 'The call made (never a generation); null when the provider has no probe' })),
    status: Nullable(Type.Integer({ description: "The upstream's HTTP status; null when none came" })),
    latency_ms: Type.Number(),
    error: Nullable(Type.String({ description: 'Why it failed, scrubbed' })),
    at: Type.Integer({ description: 'Unix seconds' }),
  },
  { ...closed, title: 'AdminChannelProbe', description: 'The outcome of one probe' },
);

export type AdminChannel = Static<typeof AdminChannel>;
export type AdminChannelList = Static<typeof AdminChannelList>;
export type AdminChannelProbe = Static<typeof AdminChannelProbe>;
