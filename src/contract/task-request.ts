/**
 * What is stored with a task about its run: the request (`tasks.request`), the route it may take,
 * and the reference to a generation running at an upstream. Plain data shared by the store, the
 * task engine and the providers, so none of them imports another for it (G390).
 */
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

/**
 * What the plan of a create request holds besides its family's request (`family`, `form`,
 * `params`: contract/family-request.ts): the rest of what is stored, the model and the charge.
 */
export interface PlanFacts extends Omit<TaskRequest, 'params'> {
  model: string;
  /** Credits charged. */
  amount: number;
}

/** One candidate of a model's route (providers.json `routes`). */
export interface RouteCandidate {
  /** The provider (channel) id. */
  provider: string;
  /** The model's name at that provider; absent: the caller's model name. */
  model?: string;
  /** Lower is tried first; candidates of equal priority share the load by `weight`. */
  priority: number;
  weight: number;
}

/** A generation running at an upstream: what the gateway keeps to check on it or cancel it. */
export interface UpstreamRef {
  /** The upstream's id of the generation. */
  id: string;
  /** Anything else a later check or cancel needs (URLs, the form, ...): plain JSON. */
  data?: Record<string, unknown>;
}
