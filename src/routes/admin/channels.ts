import type { FastifyInstance } from 'fastify';
import type { ChannelAdmin } from '../../admin/channel-admin.js';
import { AdminChannelList, AdminChannelProbe } from '../../contract/admin-channels.js';
import { ADMIN_TAG, IdParams } from '../../contract/admin-common.js';
import { responses } from '../../contract/responses.js';
import { ADMIN_ERRORS } from './errors.js';
import { actorOf } from './keys.js';

/** `/admin/v1/channels` (G322, G323): every channel across the cluster; a probe of one. */
export function registerAdminChannelRoutes(app: FastifyInstance, channels: ChannelAdmin): void {
  app.get(
    '/admin/v1/channels',
    {
      schema: {
        tags: [ADMIN_TAG],
        summary: 'Every provider (channel): type, routes, circuit, tasks in flight, outcomes and latency over 5 minutes and the hour, last error',
        response: responses({ 200: AdminChannelList }, [...ADMIN_ERRORS]),
      },
    },
    async () => channels.list(),
  );

  app.post<{ Params: { id: string } }>(
    '/admin/v1/channels/:id/probe',
    {
      schema: {
        tags: [ADMIN_TAG],
        summary: 'A cheap call that shows the upstream answers with the configured key (a list or status call, never a generation)',
        params: IdParams('channel'),
        response: responses({ 200: AdminChannelProbe }, [404, 414, ...ADMIN_ERRORS]),
      },
    },
    async (request) => channels.probe(request.params.id, actorOf(request)),
  );
}
