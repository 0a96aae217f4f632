import { Type, type Static } from '../typebox.js';
import { AdminList, closed, Created, PagingQuery, TimeQuery } from './admin-common.js';
import { StringEnum } from './schema-helpers.js';
import { Nullable } from './task-replies.js';
import { AUDIT_ACTIONS } from './audit-actions.js';

/** The audit log (G302) and the effective settings (G311) of the admin API. */

export { AUDIT_ACTIONS } from './audit-actions.js';

export const AdminAuditEntry = Type.Object(
  {
    id: Type.Integer(),
    object: Type.Literal('audit_entry'),
    created: Created,
    actor: Type.String({ description: "The admin key's id; `cli` for the mediagate command on the server; `bootstrap` for a key of the settings" }),
    actor_name: Nullable(Type.String({ description: "The actor key's name as it is now (G449); null for `cli`, `bootstrap` and a key no longer stored" })),
    action: StringEnum(AUDIT_ACTIONS),
    target: Type.String({ description: 'The id of the key, account or task changed, or of the channel probed' }),
    request_id: Nullable(Type.String({ description: "The admin request's x-request-id; null for the CLI and the bootstrap" })),
    details: Type.Record(Type.String(), Type.Unknown(), { description: 'What was asked (never a secret)' }),
  },
  { ...closed, title: 'AdminAuditEntry', description: 'One change made through the admin API or the CLI' },
);
export const AdminAuditLog = AdminList(AdminAuditEntry, 'AdminAuditLog', 'audit entries');

export const AuditQuerystring = Type.Object(
  {
    actor: Type.Optional(Type.String({ maxLength: 128, description: 'Only changes by this actor (an admin key id, cli or bootstrap)' })),
    action: Type.Optional(StringEnum(AUDIT_ACTIONS, { description: 'Only changes of this kind' })),
    target: Type.Optional(Type.String({ maxLength: 128, description: 'Only changes of this key or account' })),
    since: TimeQuery('Only changes at or after this time'),
    until: TimeQuery('Only changes before this time'),
    ...PagingQuery,
  },
  closed,
);

export const AdminSettings = Type.Object(
  {
    object: Type.Literal('settings'),
    settings: Type.Record(Type.String(), Type.Unknown(), {
      description: 'The effective configuration of the answering process; every secret replaced by "[redacted]" (G311)',
    }),
    variables: Type.Array(
      Type.Object(
        {
          name: Type.String({ description: 'The environment variable, e.g. `MEDIAGATE_BODY_LIMIT`' }),
          group: Type.String({ description: 'Its section of the settings reference, e.g. `Server`' }),
          value: Type.Unknown({
            description:
              'The value in force (the default when unset); null when unset without default; a secret\'s "[redacted]" (a URL keeps all but its credentials)',
          }),
          set: Type.Boolean({ description: 'Whether the environment set it; else the default applies' }),
        },
        closed,
      ),
      { description: "Every setting of the server by its environment variable, in the settings reference's order (G447)" },
    ),
  },
  { ...closed, title: 'AdminSettings', description: 'The effective configuration, secrets redacted' },
);

export type AuditAction = (typeof AUDIT_ACTIONS)[number];
export type AdminAuditEntry = Static<typeof AdminAuditEntry>;
export type AdminAuditLog = Static<typeof AdminAuditLog>;
export type AuditQuerystring = Static<typeof AuditQuerystring>;
export type AdminSettings = Static<typeof AdminSettings>;
