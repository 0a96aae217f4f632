/**
 * What the playground knows of the families: their ids and create paths here (checked against the
 * server's types), their fields from the gateway's own OpenAPI document (`/openapi.json`), read
 * once: enums with the contract's values, limits, exclusive pairs, models. A contract change
 * changes the form; a renamed family or body type breaks this file's type check.
 */
import type { ConsoleSession } from '../../src/contract/console.js';
import type { FamilyId } from '../../src/contract/families.js';
import type { ClipCreateBody } from '../../src/contract/clip.js';
import type { ModelCenterCreateBody } from '../../src/contract/model-center.js';
import type { MotionCreateBody } from '../../src/contract/motion.js';
import type { PicCreateBody } from '../../src/contract/pic.js';
import type { ReelCreateBody } from '../../src/contract/reel.js';
import type { VideosCreateBody } from '../../src/contract/videos.js';
import { UnreachableError, url } from './api.js';
import { createPath } from './contract-paths.js';

export { createPath, FAMILY_IDS, FAMILY_NAMES } from './contract-paths.js';
import { enumOf, type FamilyForm, formOf, type Json } from './form-fields.js';

export type { Field, FamilyForm, FieldKind } from './form-fields.js';

/** The create body of each family, by id: the playground's request is one of these. */
export interface CreateBodies {
  pic: PicCreateBody;
  clip: ClipCreateBody;
  reel: ReelCreateBody;
  motion: MotionCreateBody;
  videos: VideosCreateBody;
  'model-center': ModelCenterCreateBody;
}
export type CreateBody = CreateBodies[FamilyId];

let documentPromise: Promise<Json> | undefined;
const openApi = (): Promise<Json> => {
  // a failure is not kept: the next call (Retry) asks again
  documentPromise ??= fetch(url('openapi.json'))
    .then((r) => {
      if (!r.ok) throw new Error(`The gateway's OpenAPI document: HTTP ${r.status}`);
      return r.json() as Promise<Json>;
    })
    .catch((err: unknown) => {
      documentPromise = undefined;
      throw err instanceof TypeError ? new UnreachableError() : err;
    });
  return documentPromise;
};

/** The playground form of a family, read from the gateway's OpenAPI document. */
export async function familyForm(family: FamilyId, paths: ConsoleSession['paths']): Promise<FamilyForm> {
  return formOf(await openApi(), family, createPath(family, paths));
}

/** The chat models of the contract. */
export async function chatModels(): Promise<string[]> {
  const doc = await openApi();
  const schema: Json = doc.paths?.['/v1/chat/completions']?.post?.requestBody?.content?.['application/json']?.schema ?? {};
  return enumOf(schema.properties?.model ?? {}) ?? [];
}
