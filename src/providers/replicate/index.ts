export { createReplicateProvider, REPLICATE_DEFAULTS, type ReplicateOptions } from './provider.js';
export { entryProblem, ReplicateModels, type ReplicateModelsSpec } from './models.js';
