export { COMFYUI_DEFAULTS } from './defaults.js';
export { createComfyUiProvider, type ComfyUiOptions } from './provider.js';
export { builtInTemplates, DEFAULT_TEMPLATE } from './builtin-templates.js';
export { ComfyModels, loadTemplates, type ComfyTemplate } from './templates.js';
