import type { FamilyForm, FamilyId } from './families.js';
import type { TaskRequest } from './task-request.js';

/** What a validated create request becomes: stored as the task's request, run by a provider. */
export interface SubmitPlan extends TaskRequest {
  family: FamilyId;
  /** Request form inside the family (`A`/`B`), or null. */
  form: FamilyForm;
  model: string;
  /** Credits charged. */
  amount: number;
}
