/**
 * The providers.json fields several provider types take alike, as TypeBox schemas (their
 * `description` is the rule a ConfigError states): each factory's `optionsSchema` is built of these
 * and its own fields (G403).
 */
import { Type } from '../../typebox.js';
import { FAMILIES } from '../../contract/families.js';

const MS_RULE = 'a whole number of milliseconds between 100 and 3600000';
const Seconds = Type.Number({ minimum: 0.05, maximum: 3600, description: 'seconds between 0.05 and 3600' });

/** A time bound in milliseconds. */
export const Milliseconds = (description = MS_RULE) => Type.Optional(Type.Integer({ minimum: 100, maximum: 3_600_000, description }));

/** An upstream URL (checked further by checkUpstreamUrl when the file is read). */
export const Url = (description: string) => Type.Optional(Type.String({ description }));

/** `baseUrl` of an upstream whose API has a default address. */
export const BaseUrl = (defaultUrl: string) => Url(`an http(s) URL, up to the API version (default ${defaultUrl})`);

/** Seconds between checks of a started generation: one number, or per family. */
export const PollSecondsOption = Type.Optional(
  Type.Union(
    [
      Seconds,
      Type.Object(Object.fromEntries(FAMILIES.map((f) => [f, Type.Optional(Seconds)])), {
        additionalProperties: false,
        description: `an object of family -> seconds (families: ${FAMILIES.join(', ')})`,
      }),
    ],
    { description: 'seconds between checks (0.05-3600), or an object of family -> seconds' },
  ),
);

/** The time bounds of an upstream HTTP call. */
export const TimeBounds = { timeoutMs: Milliseconds(), connectTimeoutMs: Milliseconds() };

/** `models`: an object of model name -> what the type maps it to (its own schema checks each entry). */
export const ModelsOption = (description: string) => Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description }));
