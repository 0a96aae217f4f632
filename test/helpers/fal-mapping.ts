/** The input mapping the fal tests configure (as an operator would in providers.json `models`). */
import type { FalModels } from '../../src/providers/fal/models.js';

const veo = (image: boolean) => ({
  inputs: {
    prompt: 'prompt',
    duration: { to: 'duration', values: { 8: '8s' } },
    aspect_ratio: { to: 'aspect_ratio', values: { '16:9': '16:9', '9:16': '9:16' } },
    resolution: { to: 'resolution', values: { '720p': '720p', '1080p': '1080p' } },
    ...(image && { first_image: { to: 'image_url', single: true } }),
  },
  constants: { generate_audio: false },
  output: 'video.url',
});

export const FAL_MODELS: FalModels = {
  'fal-ai/flux/dev': {
    inputs: {
      prompt: 'prompt',
      size: {
        to: 'image_size',
        values: { '1:1': 'square_hd', '16:9': 'landscape_16_9', '9:16': 'portrait_16_9', '4:3': 'landscape_4_3', '3:4': 'portrait_4_3' },
        default: '1:1',
      },
      resolution: { accept: ['1k'] },
    },
    constants: { num_images: 1, enable_safety_checker: true },
    output: 'images[].url',
  },
  'fal-ai/veo3': veo(false),
  'fal-ai/veo3/image-to-video': veo(true),
  // a mapping that sends an input value the model refuses when it runs (only the result shows it)
  'fal-ai/kling-video/v2/master/text-to-video': {
    inputs: { prompt: 'prompt', duration: { to: 'duration', values: { 8: '8' } }, aspect_ratio: 'aspect_ratio', resolution: { accept: ['720p'] } },
    output: 'video.url',
  },
};
