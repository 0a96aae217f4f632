export { GEMINI_DEFAULTS } from './defaults.js';
export { createGeminiProvider, type GeminiOptions } from './provider.js';
