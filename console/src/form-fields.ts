/**
 * The playground's fields from a create body's JSON Schema (as the OpenAPI document gives it): pure
 * functions, no DOM, so a gateway test runs them on the real document (G367).
 */
import type { FamilyId } from '../../src/contract/families.js';

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
export type Json = Record<string, any>;

export const enumOf = (p: Json): string[] | undefined => {
  if (Array.isArray(p.enum)) return p.enum.map(String);
  if (Array.isArray(p.anyOf) && p.anyOf.every((a: Json) => a.const !== undefined)) return p.anyOf.map((a: Json) => String(a.const));
  return undefined;
};

const isMedia = (p: Json): boolean => typeof p.pattern === 'string' && p.pattern.includes('assetId');

function fieldOf(name: string, p: Json, required: boolean): Field | undefined {
  const description: string | undefined = p.description;
  const exclusive = [...(description ?? '').matchAll(/exclusive with ([A-Za-z_]+(?:(?:, | and | and with | and with the | or )[A-Za-z_]+)*)/g)].flatMap((m) =>
    m[1]!.split(/, | and with the | and with | and | or /),
  );
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
export function fieldsOf(schema: Json): Field[] {
  const required = new Set<string>(schema.required ?? []);
  return Object.entries<Json>(schema.properties ?? {})
    .filter(([name]) => !['model', 'prompt', 'callback_url', 'content'].includes(name))
    .map(([name, p]) => fieldOf(name, p, required.has(name)))
    .filter((f): f is Field => f !== undefined);
}

/** The form of a family's create path in an OpenAPI document. */
export function formOf(doc: Json, family: FamilyId, path: string): FamilyForm {
  const schema: Json = doc.paths?.[path]?.post?.requestBody?.content?.['application/json']?.schema ?? {};
  const modelFields: Record<string, Field[]> = {};
  let models = enumOf(schema.properties?.model ?? {}) ?? [];
  for (const rule of (schema.allOf ?? []) as Json[]) {
    const ids = enumOf(rule.if?.properties?.model ?? {}) ?? [];
    for (const id of ids) modelFields[id] = fieldsOf(rule.then ?? {});
    models = [...models, ...ids.filter((id) => !models.includes(id))];
  }
  const text = family === 'motion' ? schema.properties?.content?.items?.properties?.text : schema.properties?.prompt;
  return { family, path, models, ...(text?.maxLength !== undefined && { promptMax: text.maxLength }), fields: fieldsOf(schema), modelFields };
}
