/** `GET /admin/v1/audit` (G302): the audit log, newest first, filtered by actor, action, target and time. */
import type { AdminAuditLog, AuditQuerystring } from '../contract/admin-audit.js';
import type { AuditStore } from '../store/types.js';
import { parseTimeParam } from '../tasks/task-list.js';
import { decodeCursor, filtersDigest, pageOf, parseLimit } from './paging.js';
import { auditReply } from './replies.js';

export async function listAudit(audit: AuditStore, query: AuditQuerystring): Promise<AdminAuditLog> {
  const limit = parseLimit(query.limit);
  const filters = {
    ...(query.actor !== undefined && { actor: query.actor }),
    ...(query.action !== undefined && { action: query.action }),
    ...(query.target !== undefined && { target: query.target }),
    ...(query.since !== undefined && { since: parseTimeParam('since', query.since) }),
    ...(query.until !== undefined && { until: parseTimeParam('until', query.until) }),
  };
  const digest = filtersDigest(['audit', filters]);
  const before = query.cursor === undefined ? undefined : decodeCursor(query.cursor, digest, ['n']);
  const rows = await audit.list({ ...filters, ...(before && { beforeId: before[0] as number }), limit: limit + 1 });
  const page = pageOf(rows, limit, (e) => [e.id], digest);
  return { object: 'list', data: page.items.map(auditReply), has_more: page.has_more, next_cursor: page.next_cursor };
}
