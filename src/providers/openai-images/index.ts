export { OPENAI_IMAGES_DEFAULTS } from './defaults.js';
export { createOpenAiImagesProvider, type OpenAiImagesOptions } from './provider.js';
