import type { FamilyId } from './catalog.js';
import type { MediaRefs } from './media-refs.js';
import type { OutputSpec } from './output.js';

/** What a validated create request becomes: stored as the task's request, run by a provider. */
export interface SubmitPlan {
  family: FamilyId;
  /** Request form inside the family (`A`/`B`), or null. */
  form: string | null;
  model: string;
  /** The caller's parameters, validated and normalised (defaults applied). */
  params: Record<string, unknown>;
  /** What must be produced (decisions.md #19). */
  output: OutputSpec;
  /** Caller media by role (frames, references), with their field names. */
  media: MediaRefs;
  /** Credits charged. */
  amount: number;
}
