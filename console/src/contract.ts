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
import { url } from './api.js';

export const FAMILY_IDS = ['pic', 'clip', 'reel', 'motion', 'videos', 'model-center'] as const satisfies readonly FamilyId[];
type Missing = Exclude<FamilyId, (typeof FAMILY_IDS)[number]>;
/** Fails to compile when the server gains a family the console does not list. */
export const EVERY_FAMILY: [Missing] extends [never] ? true : never = true;

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

export const FAMILY_NAMES: Record<FamilyId, string> = {
  pic: 'pic (images)', clip: 'clip (videos)', reel: 'reel (videos)', motion: 'motion (videos)', videos: 'videos', 'model-center': 'model-center',
};

/** The create path of a family (the prefixes come with the session). */
export function createPath(family: FamilyId, paths: ConsoleSession['paths']): string {
  switch (family) {
    case 'pic': return '/v1/pic/images';
    case 'clip': return '/clip/videos';
    case 'reel': return '/v1/reel/videos';
    case 'motion': return `${paths.power_prefix}/v1/motion/videos`;
    case 'videos': return '/v1/videos/videos';
    case 'model-center': return '/v2/model-center/tasks';
  }
}

export type FieldKind = 'enum' | 'integer' | 'number' | 'boolean' | 'text' | 'url' | 'urls';

export interface Field {
  name: string;
  kind: FieldKind;
  values?: string[];
  description?: string;
  required: boolean;
  default?: unknown;
  maxItems?: number;
  minimum?: number;
  maximum?: number;
  maxLength?: number;
  /** Fields it may not be sent with ("exclusive with X" in the contract's description). */
  exclusive: string[];
}

export interface FamilyForm {
  family: FamilyId;
  path: string;
  models: string[];
  /** The prompt field's limit (motion: the text content item). */
  promptMax?: number;
  fields: Field[];
  /** Model-center: each fully described model's own fields over the shared ones. */
  modelFields: Record<string, Field[]>;
}

// biome-ignore lint/suspicious/noExplicitAny: JSON Schema from the OpenAPI document, walked by hand
type Json = Record<string, any>;

const enumOf = (p: Json): string[] | undefined => {
  if (Array.isArray(p.enum)) return p.enum.map(String);
  if (Array.isArray(p.anyOf) && p.anyOf.every((a: Json) => a.const !== undefined)) return p.anyOf.map((a: Json) => String(a.const));
  return undefined;
};

const isMedia = (p: Json): boolean => typeof p.pattern === 'string' && p.pattern.includes('assetId');

function fieldOf(name: string, p: Json, required: boolean): Field | undefined {
  const description: string | undefined = p.description;
  const exclusive = [...(description ?? '').matchAll(/exclusive with ([A-Za-z_]+(?:(?:, | and | and with | and with the | or )[A-Za-z_]+)*)/g)]
    .flatMap((m) => m[1]!.split(/, | and with the | and with | and | or /));
  const base = { name, required, exclusive, ...(description && { description }), ...(p.default !== undefined && { default: p.default }) };
  const values = enumOf(p);
  if (values) return { ...base, kind: 'enum', values };
  if (Array.isArray(p.anyOf) && p.anyOf.some((a: Json) => a.type === 'integer')) return { ...base, kind: 'integer' };
  if (p.type === 'integer' || p.type === 'number') {
    return { ...base, kind: p.type, ...(p.minimum !== undefined && { minimum: p.minimum }), ...(p.maximum !== undefined && { maximum: p.maximum }) };
  }
  if (p.type === 'boolean') return { ...base, kind: 'boolean' };
  if (p.type === 'array' && p.items && isMedia(p.items)) return { ...base, kind: 'urls', ...(p.maxItems !== undefined && { maxItems: p.maxItems }) };
  if (p.type === 'string' && isMedia(p)) return { ...base, kind: 'url' };
  if (p.type === 'string') return { ...base, kind: 'text', ...(p.maxLength !== undefined && { maxLength: p.maxLength }) };
  return undefined; // objects (motion's content items) are built by the form itself
}

/** The fields of an object schema but model, prompt and callback_url (shown apart). */
function fieldsOf(schema: Json): Field[] {
  const required = new Set<string>(schema.required ?? []);
  return Object.entries<Json>(schema.properties ?? {})
    .filter(([name]) => !['model', 'prompt', 'callback_url', 'content'].includes(name))
    .map(([name, p]) => fieldOf(name, p, required.has(name)))
    .filter((f): f is Field => f !== undefined);
}

let documentPromise: Promise<Json> | undefined;
const openApi = (): Promise<Json> => {
  documentPromise ??= fetch(url('openapi.json')).then((r) => r.json() as Promise<Json>);
  return documentPromise;
};

/** The playground form of a family, read from the gateway's OpenAPI document. */
export async function familyForm(family: FamilyId, paths: ConsoleSession['paths']): Promise<FamilyForm> {
  const doc = await openApi();
  const path = createPath(family, paths);
  const schema: Json = doc.paths?.[path]?.post?.requestBody?.content?.['application/json']?.schema ?? {};
  const modelFields: Record<string, Field[]> = {};
  let models = enumOf(schema.properties?.model ?? {}) ?? [];
  for (const rule of (schema.allOf ?? []) as Json[]) {
    const ids = enumOf(rule.if?.properties?.model ?? {}) ?? [];
    for (const id of ids) modelFields[id] = fieldsOf(rule.then ?? {});
    models = [...models, ...ids.filter((id) => !models.includes(id))];
  }
  const text = family === 'motion'
    ? schema.properties?.content?.items?.properties?.text
    : schema.properties?.prompt;
  return { family, path, models, ...(text?.maxLength !== undefined && { promptMax: text.maxLength }), fields: fieldsOf(schema), modelFields };
}

/** The chat models of the contract. */
export async function chatModels(): Promise<string[]> {
  const doc = await openApi();
  const schema: Json = doc.paths?.['/v1/chat/completions']?.post?.requestBody?.content?.['application/json']?.schema ?? {};
  return enumOf(schema.properties?.model ?? {}) ?? [];
}
