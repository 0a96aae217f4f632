import type { FamilyRequest } from './family-request.js';
import type { PlanFacts } from './task-request.js';

/**
 * What a validated create request becomes: stored as the task's request, run by a provider. Its
 * `family`, `form` and `params` are one family's request (G405); the rest is {@link PlanFacts}.
 */
export type SubmitPlan = FamilyRequest & PlanFacts;
