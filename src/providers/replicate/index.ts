export { REPLICATE_DEFAULTS } from './defaults.js';
export { createReplicateProvider, type ReplicateOptions } from './provider.js';
export { entryProblem, ReplicateModels, type ReplicateModelsSpec } from './models.js';
