/**
 * The kinds of change the audit log records (G302). A module of its own, with no imports, so the
 * console bundles the list (its Action filter) without the schema library.
 */
export const AUDIT_ACTIONS = [
  'key.create',
  'key.update',
  'key.revoke',
  'key.rotate',
  'account.create',
  'account.grant',
  'task.cancel',
  'channel.probe',
] as const;
