/**
 * The per-model input mapping of a `fal` provider (providers.json `models`, G140): for
 * each fal model id (a route's `model`), how each request field becomes an input of that model,
 * the constant inputs always sent, and where the model's answer holds the result files. A request
 * field the mapping does not name is refused (G128), never dropped.
 */
import { Type, type Static } from '../../typebox.js';

const Scalar = Type.Union([Type.String(), Type.Number(), Type.Boolean()]);

export const FalInputRule = Type.Union(
  [
    Type.String({ minLength: 1, description: 'the fal input the field is sent as, unchanged' }),
    Type.Object(
      {
        to: Type.Optional(Type.String({ minLength: 1, description: 'the fal input the field is sent as' })),
        values: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'request value -> fal value; any other value is refused' })),
        accept: Type.Optional(
          Type.Array(Scalar, { minItems: 1, description: 'values the model makes without being told (nothing is sent); any other value is refused' }),
        ),
        default: Type.Optional(Scalar),
        single: Type.Optional(Type.Boolean({ description: 'a media field sent as one URL (a second one is refused)' })),
        max: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'most media URLs the input takes' })),
      },
      { additionalProperties: false, description: 'an object { to?, values?, accept?, default?, single?, max? }' },
    ),
  ],
  { description: 'a fal input name, or { to?, values?, accept?, default?, single?, max? }' },
);
export type FalInputRule = Static<typeof FalInputRule>;

export const FalModelMapping = Type.Object(
  {
    inputs: Type.Record(Type.String(), FalInputRule, { description: 'request field -> how it is sent' }),
    constants: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'fal inputs always sent' })),
    output: Type.String({
      pattern: '^[A-Za-z_][A-Za-z0-9_]*(\\[\\])?(\\.[A-Za-z_][A-Za-z0-9_]*(\\[\\])?)*$',
      description: 'where the files are in the answer, e.g. images[].url or video.url',
    }),
  },
  { additionalProperties: false, description: 'an object { inputs, constants?, output }' },
);
export type FalModelMapping = Static<typeof FalModelMapping>;

/** A fal model id: `owner/alias` and an optional sub-path (`fal-ai/kling-video/v2/master/text-to-video`). */
export const FAL_MODEL_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]*(\/[A-Za-z0-9_.-]+)+$/;

export const FalModels = Type.Record(Type.String({ pattern: FAL_MODEL_ID.source }), FalModelMapping, {
  description: 'an object of fal model id (owner/alias[/sub-path]) -> { inputs, constants?, output }',
});
export type FalModels = Static<typeof FalModels>;

/** The rule in its object form. */
export function ruleOf(rule: FalInputRule): Exclude<FalInputRule, string> {
  return typeof rule === 'string' ? { to: rule } : rule;
}

/** The values a `output` path names in an answer: `images[].url` -> every image's url. */
export function valuesAt(json: unknown, path: string): unknown[] {
  let current: unknown[] = [json];
  for (const part of path.split('.')) {
    const list = part.endsWith('[]');
    const key = list ? part.slice(0, -2) : part;
    current = current.flatMap((v) => {
      const next = v && typeof v === 'object' ? (v as Record<string, unknown>)[key] : undefined;
      if (!list) return next === undefined ? [] : [next];
      return Array.isArray(next) ? next : [];
    });
  }
  return current;
}
