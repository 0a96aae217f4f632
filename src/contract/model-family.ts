import { findModel } from './catalog.js';
import { CHAT_MODELS } from './chat.js';
import type { FamilyId } from './families.js';
import { findModelCenterModel } from './model-center-catalog.js';

/** The family a model name belongs to (`chat` for a chat model), or undefined for a name no family knows. */
export function familyOfModel(model: string): FamilyId | 'chat' | undefined {
  if ((CHAT_MODELS as readonly string[]).includes(model)) return 'chat';
  return findModel(model)?.family;
}

/** What a media model makes: undefined for a chat model or a name no family knows. */
export function kindOfModel(model: string): 'image' | 'video' | undefined {
  const family = familyOfModel(model);
  if (family === undefined || family === 'chat') return undefined;
  if (family === 'pic') return 'image';
  if (family === 'model-center') return findModelCenterModel(model)?.kind;
  return 'video';
}
