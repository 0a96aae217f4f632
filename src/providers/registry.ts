import { AppError } from '../errors.js';
import type { FamilyId } from '../contract/families.js';
import type { Provider } from './types.js';

/** The providers this process knows, and which one runs each model. */
export class ProviderRegistry {
  private readonly providers = new Map<string, Provider>();

  constructor(providers: Provider[], private readonly routes: Record<string, string> = {}, private readonly fallback = 'sandbox') {
    for (const p of providers) this.providers.set(p.id, p);
    for (const [model, id] of Object.entries(routes)) {
      if (!this.providers.has(id)) throw new Error(`MEDIAGATE_MODEL_ROUTES: ${model} is routed to unknown provider "${id}" (known: ${this.ids().join(', ')})`);
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

  /** The provider id a model runs on: its own route, else the `*` route, else the fallback. */
  routeModel(model: string, family: FamilyId): string {
    const id = this.routes[model] ?? this.routes['*'] ?? this.fallback;
    const provider = this.providers.get(id);
    if (!provider?.capabilities.families.includes(family)) {
      throw new AppError('service_unavailable', `No provider is configured for model ${model}`);
    }
    return id;
  }
}
