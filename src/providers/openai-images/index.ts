export { createOpenAiImagesProvider, OPENAI_IMAGES_DEFAULTS, type OpenAiImagesOptions } from './provider.js';
