import type { FastifyInstance } from 'fastify';
import type { TaskService } from '../tasks/service.js';
import { registerPicRoutes } from './pic.js';

/** The three address prefixes (decisions.md #1): `{base_url}`, `{power_base_url}`, `{api_base_url}` paths. */
export interface RoutePaths {
  basePrefix: string;
  powerPrefix: string;
  apiPrefix: string;
}

export type FamilyRouteRegistrar = (api: FastifyInstance, tasks: TaskService, paths: RoutePaths) => void;

/** Every family's create (and family-specific) routes, registered inside the authenticated scope. */
export const FAMILY_ROUTES: readonly FamilyRouteRegistrar[] = [
  registerPicRoutes,
  // clip + reel routes go here
  // motion + videos routes go here
  // model-center routes go here
];
