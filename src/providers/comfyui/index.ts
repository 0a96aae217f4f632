export { COMFYUI_DEFAULTS, createComfyUiProvider, type ComfyUiOptions } from './provider.js';
export { builtInTemplates, DEFAULT_TEMPLATE } from './builtin-templates.js';
export { ComfyModels, loadTemplates, type ComfyTemplate } from './templates.js';
