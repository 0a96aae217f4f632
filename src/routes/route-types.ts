import type { FastifyInstance } from 'fastify';
import type { ReplyContext } from '../families/reply-context.js';
import type { LiveRequests } from '../http/live-requests.js';
import type { TaskService } from '../tasks/service.js';

/** The three address prefixes (D1): `{base_url}`, `{power_base_url}`, `{api_base_url}` paths. */
export interface RoutePaths {
  basePrefix: string;
  powerPrefix: string;
  apiPrefix: string;
}

/** Registers a family's routes; `links` signs result URLs for query replies. */
export type FamilyRouteRegistrar = (api: FastifyInstance, tasks: TaskService, paths: RoutePaths, links: ReplyContext, live: LiveRequests) => void;
