/** The providers.json `models` mapping the replicate tests use (README and G135 show the same shape). */
import { VIDEO_VERSION } from '../fakes/replicate.js';

export const REPLICATE_MODELS = {
  'flux-schnell': {
    model: 'black-forest-labs/flux-schnell',
    output: 'image',
    input: { prompt: 'prompt', size: 'aspect_ratio', resolution: { values: { '1k': null } } },
    constants: { output_format: 'png', num_outputs: 1, go_fast: true },
  },
  'video-01': {
    version: VIDEO_VERSION,
    output: 'video',
    input: {
      prompt: 'prompt',
      duration: 'duration',
      aspect_ratio: { values: { '16:9': null } },
      resolution: { values: { '720p': null } },
      first_image: 'first_frame_image',
    },
    constants: { prompt_optimizer: false },
  },
  // mappings an operator got wrong: the model refuses what they send
  'flux-misfit': { model: 'black-forest-labs/flux-schnell', output: 'image', input: { prompt: 'prompt', size: 'megapixels' } },
  'flux-bad-constant': { model: 'black-forest-labs/flux-schnell', output: 'image', input: { prompt: 'prompt' }, constants: { num_outputs: 9 } },
  'no-such-model': { model: 'acme/nothing-here', output: 'image', input: { prompt: 'prompt' } },
  'no-such-version': { version: '0'.repeat(64), output: 'image', input: { prompt: 'prompt' } },
} as const;
