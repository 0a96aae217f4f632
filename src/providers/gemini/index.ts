export { createGeminiProvider, GEMINI_DEFAULTS, type GeminiOptions } from './provider.js';
