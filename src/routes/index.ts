import type { FamilyRouteRegistrar } from './route-types.js';
import { registerPicRoutes } from './pic.js';
import { registerClipRoutes } from './clip.js';
import { registerReelRoutes } from './reel.js';
import { registerMotionRoutes } from './motion.js';
import { registerVideosRoutes } from './videos.js';
import { registerModelCenterRoutes } from './model-center.js';

/** Every family's create (and family-specific) routes, registered inside the authenticated scope. */
export const FAMILY_ROUTES: readonly FamilyRouteRegistrar[] = [
  registerPicRoutes,
  registerClipRoutes,
  registerReelRoutes,
  registerMotionRoutes,
  registerVideosRoutes,
  registerModelCenterRoutes,
];
