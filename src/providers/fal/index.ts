export * from './provider.js';
export { FAL_DEFAULTS } from './defaults.js';
