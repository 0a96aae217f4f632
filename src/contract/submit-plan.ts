import type { RouteCandidate } from '../providers/channels.js';
import type { FamilyForm, FamilyId } from './families.js';
import type { MediaRefs } from './media-refs.js';
import type { OutputSpec } from './output.js';

/** What a task asks of its provider, stored with the task (`tasks.request`). */
export interface TaskRequest {
  /** The caller's parameters, validated and normalised (defaults applied). */
  params: Record<string, unknown>;
  /** What must be produced (D19). */
  output: OutputSpec;
  /** Caller media by role (frames, references), with their field names. */
  media: MediaRefs;
  /**
   * The model's route when the task was submitted (G90): the channels to try for each new
   * generation, in order. Absent: the task's own provider (the sandbox).
   */
  route?: RouteCandidate[];
  /** The W3C trace context of the submit's span, when tracing is on (G229): each run of the task continues that trace. */
  traceparent?: string;
}

/** What a validated create request becomes: stored as the task's request, run by a provider. */
export interface SubmitPlan extends TaskRequest {
  family: FamilyId;
  /** Request form inside the family (`A`/`B`), or null. */
  form: FamilyForm;
  model: string;
  /** Credits charged. */
  amount: number;
}
