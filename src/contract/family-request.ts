/**
 * A task's request by family (and form): what the family's plan stored as its parameters, typed
 * with that family's stored-parameter schema (src/contract/<family>.ts), so a provider that narrows
 * by `family` (and `form`) reads typed fields (G405).
 */
import type { ClipRequest } from './clip.js';
import type { FamilyForm, FamilyId } from './families.js';
import type { ModelCenterRequest } from './model-center.js';
import type { MotionRequest } from './motion.js';
import type { PicRequest } from './pic.js';
import type { ReelRequest } from './reel.js';
import type { VideosRequest } from './videos.js';

/** The family, the form and the parameters of a request, keyed by family (clip: by form too). */
export type FamilyRequest = PicRequest | ClipRequest | ReelRequest | MotionRequest | VideosRequest | ModelCenterRequest;

/** The parameters of any family's request. */
export type FamilyParams = FamilyRequest['params'];

/**
 * A stored task's request as its family's (G405): the one place the parameters read back from the
 * store (`tasks.request`, plain JSON) are taken for the shape the family's plan gave them. Nothing
 * else writes them: a task's family, form and parameters are stored together at submit, from a plan
 * whose type is that family's.
 */
export function familyRequestOf(family: FamilyId, form: FamilyForm, params: Record<string, unknown>): FamilyRequest {
  return { family, form, params } as FamilyRequest;
}

/**
 * The parameters as fields by name, for a mapping that goes over every field whatever the family
 * (a declared input mapping: fal, Replicate, ComfyUI; an adapter's check for fields it has no input
 * for). Every family's parameters are such a record: no cast.
 */
export function paramFields(params: FamilyParams): Readonly<Record<string, unknown>> {
  return params;
}
