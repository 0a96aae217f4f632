/** The families the console offers and the path each one's create is posted to (no DOM: tests import it). */
import type { ConsoleSession } from '../../src/contract/console.js';
import type { FamilyId } from '../../src/contract/families.js';

export const FAMILY_IDS = ['pic', 'clip', 'reel', 'motion', 'videos', 'model-center'] as const satisfies readonly FamilyId[];
type Missing = Exclude<FamilyId, (typeof FAMILY_IDS)[number]>;
/** Fails to compile when the server gains a family the console does not list. */
export const EVERY_FAMILY: [Missing] extends [never] ? true : never = true;

export const FAMILY_NAMES: Record<FamilyId, string> = {
  pic: 'pic (images)',
  clip: 'clip (videos)',
  reel: 'reel (videos)',
  motion: 'motion (videos)',
  videos: 'videos',
  'model-center': 'model-center',
};

/** The create path of a family (the prefixes come with the session). */
export function createPath(family: FamilyId, paths: ConsoleSession['paths']): string {
  switch (family) {
    case 'pic':
      return '/v1/pic/images';
    case 'clip':
      return '/clip/videos';
    case 'reel':
      return '/v1/reel/videos';
    case 'motion':
      return `${paths.power_prefix}/v1/motion/videos`;
    case 'videos':
      return '/v1/videos/videos';
    case 'model-center':
      return '/v2/model-center/tasks';
  }
}
