/**
 * The create body a relay sends (G95): the task's stored request (validated caller
 * parameters with defaults applied, src/contract/*.ts `plan*Task`) written back in the family's own
 * create fields, valid under the contract's rules (one member of each exclusive pair, no field of
 * the other form), `model` the route's upstream model, and each caller medium at its field as a URL
 * the upstream can fetch (`ctx.mediaUrl`: the caller's URL as given, an uploaded asset as a signed
 * gateway URL).
 */
import { allRefs } from '../../contract/media-refs.js';
import { isMotionPro } from '../../contract/motion.js';
import type { ProviderJob } from '../types.js';
import { replaceAtPath, replaceEverywhere } from './field-path.js';

type Params = Record<string, unknown>;

/** `fields` of `params` that are set (not undefined or null), in that order. */
function pick<P extends object>(params: P, fields: ReadonlyArray<keyof P & string>): Params {
  const out: Params = {};
  for (const f of fields) if (params[f] !== undefined && params[f] !== null) out[f] = params[f];
  return out;
}

/** The same, with empty lists left out (the contract's lists are optional; an empty one says nothing). */
function pickLists<P extends object>(params: P, fields: ReadonlyArray<keyof P & string>): Params {
  const out: Params = {};
  for (const f of fields) {
    const value = params[f];
    if (Array.isArray(value) && value.length > 0) out[f] = value;
  }
  return out;
}

const REFERENCE_FIELDS = ['input_reference', 'image_urls'] as const;

/** The body of the job's family, without `model`, from its typed parameters (stored shapes: src/contract/<family>.ts, G405). */
function familyBody(job: ProviderJob): Params {
  switch (job.family) {
    case 'pic':
      return { ...pick(job.params, ['prompt', 'resolution', 'size']), ...pickLists(job.params, ['image_urls']) };
    // Form A: `size` stands for the orientation (exclusive with aspect_ratio; `resolution` is Form B's).
    // Form B: aspect_ratio and resolution; its duration is always 8 and has no field in the Form B table.
    case 'clip':
      return job.form === 'B'
        ? {
            ...pick(job.params, ['prompt', 'aspect_ratio', 'resolution']),
            ...pickLists(job.params, REFERENCE_FIELDS),
            ...pick(job.params, ['first_image', 'last_image']),
          }
        : {
            ...pick(job.params, ['prompt', 'size', 'duration']),
            ...pickLists(job.params, REFERENCE_FIELDS),
            ...pick(job.params, ['first_image', 'last_image']),
          };
    case 'reel':
      return { ...pick(job.params, ['prompt', 'size', 'duration']), ...pickLists(job.params, REFERENCE_FIELDS) };
    // `resolution` is the model's (not a field); generate_audio only where the model has audio; the
    // service tier only when it is not the default (the contract shows no field for it, G29).
    case 'motion':
      return {
        ...pick(job.params, ['content', 'ratio', 'duration']),
        ...(isMotionPro(job.model) && pick(job.params, ['generate_audio'])),
        ...(job.params.service_tier === 'flex' && { service_tier: 'flex' }),
      };
    case 'videos':
      return {
        ...pick(job.params, ['prompt', 'duration', 'ratio', 'resolution', 'image', 'lastFrameImage']),
        ...pickLists(job.params, ['referenceImages', 'referenceVideos']),
      };
    // flat: every stored parameter is passed on (D11), the model's table defaults included
    case 'model-center':
      return { ...job.params };
  }
}

/**
 * The JSON body of the create call for `job`. `mediaUrl` gives the URL to send for each caller
 * medium; it is put at the medium's field (`content[1].image_url.url`), or, where the task stores
 * the medium under its canonical name instead of the caller's alias (`image_urls` of an sd model
 * is stored as `reference_images`), wherever the caller's URL is.
 */
export function createBody(job: ProviderJob, mediaUrl: (ref: ProviderJob['media']['images'][number]) => string): Params {
  const body: Params = { model: job.upstreamModel, ...structuredClone(familyBody(job)) };
  body.model = job.upstreamModel;
  const placedEverywhere = new Set<string>();
  for (const { ref } of allRefs(job.media)) {
    const url = mediaUrl(ref);
    if (url === ref.url) continue;
    if (replaceAtPath(body, ref.field, ref.url, url)) continue;
    if (placedEverywhere.has(ref.url)) continue;
    placedEverywhere.add(ref.url);
    if (replaceEverywhere(body, ref.url, url) === 0) {
      throw new Error(`the relay could not place the medium of ${ref.field} in the ${job.family} create body`);
    }
  }
  return body;
}
