/**
 * The per-model input mapping of a `replicate` provider in providers.json (G135): for
 * each model name a route gives it (the route's `model`), which Replicate model or version runs it,
 * what it makes, how each request field becomes one of that model's inputs, and inputs always sent.
 *
 * ```json
 * "models": {
 *   "flux-schnell": {
 *     "model": "black-forest-labs/flux-schnell", "output": "image",
 *     "input": { "prompt": "prompt", "size": "aspect_ratio", "resolution": { "values": { "1k": null } } },
 *     "constants": { "output_format": "png", "num_outputs": 1 }
 *   }
 * }
 * ```
 * An `input` key is a request field (`prompt`, `duration`), or one item of a list field
 * (`image_urls[0]`: that item alone; `image_urls[1]` is then refused). Its value is the model's input
 * name (the value passed as it is, caller media as a URL the upstream can fetch), or
 * `{ "name"?, "values"? }`: only the listed request values are honoured, each sent as the value it
 * maps to (`null`: honoured without sending anything: what the model makes anyway); without `name`
 * nothing is sent. Every request field not listed is refused (G128).
 */
import { Type, type Static } from '../../typebox.js';

const INPUT_NAME = '^[A-Za-z_][A-Za-z0-9_]*$';
const Scalar = Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()]);

export const ReplicateInput = Type.Union(
  [
    Type.String({ pattern: INPUT_NAME, description: "the model's input name" }),
    Type.Object(
      {
        name: Type.Optional(Type.String({ pattern: INPUT_NAME, description: "the model's input name" })),
        values: Type.Optional(Type.Record(Type.String(), Scalar, { description: 'an object of request value -> value sent (null: honoured, nothing sent)' })),
      },
      { additionalProperties: false },
    ),
  ],
  { description: 'an input name, or { name?, values? }' },
);

export const ReplicateModel = Type.Object(
  {
    model: Type.Optional(
      Type.String({
        pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*$',
        description: 'an official model, owner/name (POST /models/{owner}/{name}/predictions)',
      }),
    ),
    version: Type.Optional(
      Type.String({
        pattern: '^([A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*:)?[0-9a-f]{64}$',
        description: 'a version id, 64 hex digits (POST /predictions)',
      }),
    ),
    output: Type.Union([Type.Literal('image'), Type.Literal('video'), Type.Literal('audio')], {
      description: 'one of image, video, audio: what the model makes',
    }),
    input: Type.Record(Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]*(\\[\\d+\\])?$' }), ReplicateInput, {
      description: 'an object of request field -> input',
    }),
    constants: Type.Optional(Type.Record(Type.String({ pattern: INPUT_NAME }), Type.Unknown(), { description: 'inputs always sent' })),
  },
  { additionalProperties: false, description: 'an object { model or version, output, input, constants? }' },
);

export const ReplicateModels = Type.Record(Type.String({ pattern: '^\\S+$' }), ReplicateModel, {
  description: "an object of model name (the route's model) -> { model or version, output, input, constants? }",
});

export type ReplicateInputSpec = Static<typeof ReplicateInput>;
export type ReplicateModelSpec = Static<typeof ReplicateModel>;
export type ReplicateModelsSpec = Static<typeof ReplicateModels>;

/** What names the model in messages: `owner/name` or the version id. */
export const labelOf = (spec: ReplicateModelSpec): string => spec.model ?? spec.version ?? '(none)';

/** Why a mapping entry cannot be used (exactly one of model and version), or undefined. */
export function entryProblem(spec: ReplicateModelSpec): string | undefined {
  if ((spec.model === undefined) === (spec.version === undefined)) return 'must name exactly one of "model" (owner/name) and "version"';
  const clash = Object.keys(spec.constants ?? {}).find((c) => Object.values(spec.input).some((i) => (typeof i === 'string' ? i : i.name) === c));
  if (clash !== undefined) return `constants.${clash} is also an input a request field maps to`;
  return undefined;
}
