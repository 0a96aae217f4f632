import type { FamilyId } from '../contract/families.js';
import { AppError } from '../errors.js';
import type { RouteCandidate } from './channels.js';
import type { Provider } from './types.js';

/**
 * The providers this process knows, and the route of each model: its candidates in order
 * (providers.json `routes`, or `MEDIAGATE_MODEL_ROUTES`; G90). A model without a route of its own
 * takes the `*` route, else the fallback provider (the sandbox).
 */
export class ProviderRegistry {
  private readonly providers = new Map<string, Provider>();

  constructor(providers: Provider[], private readonly routes: Record<string, RouteCandidate[]> = {}, private readonly fallback = 'sandbox') {
    for (const p of providers) this.providers.set(p.id, p);
    for (const [model, candidates] of Object.entries(routes)) {
      for (const c of candidates) {
        if (!this.providers.has(c.provider)) throw new Error(`the route of ${model} names unknown provider "${c.provider}" (known: ${this.ids().join(', ')})`);
      }
    }
    if (!this.providers.has(fallback) && routes['*'] === undefined) {
      throw new Error(`no provider "${fallback}" registered for models without a route`);
    }
  }

  ids(): string[] {
    return [...this.providers.keys()];
  }

  get(id: string): Provider | undefined {
    return this.providers.get(id);
  }

  /** A model's route: the candidates that can run its family, in order; 503 when none can. */
  routeModel(model: string, family: FamilyId): RouteCandidate[] {
    const route = this.routes[model] ?? this.routes['*'] ?? [{ provider: this.fallback, priority: 0, weight: 1 }];
    const usable = route.filter((c) => this.providers.get(c.provider)?.capabilities.families.includes(family));
    if (usable.length === 0) throw new AppError('service_unavailable', `No provider is configured for model ${model}`);
    return usable;
  }
}

/** `MEDIAGATE_MODEL_ROUTES` (model -> one provider) as routes of one candidate each. */
export function routesOfShorthand(routes: Record<string, string>): Record<string, RouteCandidate[]> {
  return Object.fromEntries(Object.entries(routes).map(([model, provider]) => [model, [{ provider, priority: 0, weight: 1 }]]));
}
