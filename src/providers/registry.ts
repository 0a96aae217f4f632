import { CHAT_MODELS } from '../contract/chat.js';
import type { ChatProvider } from '../chat/types.js';
import { AppError } from '../errors.js';
import type { RouteCandidate } from '../contract/task-request.js';
import type { Provider, Refusal, ServiceFamily, UnroutedJob } from './types.js';

/**
 * The providers this process knows, media and chat alike, and the route of each model: its
 * candidates in order (providers.json `routes`, or the shorthand settings; G90). A model without
 * a route of its own takes the `*` route, else the fallback provider (the sandbox).
 */
export class ProviderRegistry {
  private readonly providers = new Map<string, Provider>();

  constructor(
    providers: Provider[],
    private readonly routes: Record<string, RouteCandidate[]> = {},
    private readonly fallback = 'sandbox',
  ) {
    for (const p of providers) {
      if (this.providers.has(p.id)) throw new Error(`two providers are named "${p.id}"`);
      for (const family of p.capabilities.families) {
        if (family === 'chat' ? !p.chat : !p.start) throw new Error(`provider "${p.id}" declares ${family} but has no ${family === 'chat' ? 'chat' : 'start'}`);
      }
      this.providers.set(p.id, p);
    }
    for (const [model, candidates] of Object.entries(routes)) {
      for (const c of candidates) {
        if (!this.providers.has(c.provider)) throw new Error(`the route of ${model} names unknown provider "${c.provider}" (known: ${this.ids().join(', ')})`);
      }
    }
  }

  ids(): string[] {
    return [...this.providers.keys()];
  }

  /** Providers that run tasks of some media family (the task runner claims for these). */
  mediaIds(): string[] {
    return this.ids().filter((id) => this.providers.get(id)!.capabilities.families.some((f) => f !== 'chat'));
  }

  get(id: string): Provider | undefined {
    return this.providers.get(id);
  }

  /**
   * A model's route: its own, else the `*` candidates that can serve its family, else the fallback
   * (the sandbox); 503 when no candidate can serve it.
   */
  routeModel(model: string, family: ServiceFamily): RouteCandidate[] {
    const serves = (c: RouteCandidate): boolean => this.providers.get(c.provider)?.capabilities.families.includes(family) ?? false;
    const own = this.routes[model];
    const wildcard = this.routes['*']?.filter(serves) ?? [];
    const route = own?.filter(serves) ?? (wildcard.length > 0 ? wildcard : [{ provider: this.fallback, priority: 0, weight: 1 }].filter(serves));
    if (route.length === 0) throw new AppError('service_unavailable', `No provider is configured for model ${model}`);
    return route;
  }

  /**
   * The candidates of `route` that can honour the request as asked (Provider.refuse, with each
   * candidate's own model name), in order; when none can, the first refusal as a 400 naming the
   * field (issue 14's mapping rule: never silently dropped).
   */
  honouring(route: RouteCandidate[], job: UnroutedJob): RouteCandidate[] {
    let first: Refusal | undefined;
    const kept = route.filter((c) => {
      const refusal = this.refusalOf(c, job);
      first ??= refusal;
      return refusal === undefined;
    });
    if (kept.length === 0 && first) throw new AppError('invalid_request', `${first.field}: ${first.message}`, { param: first.field });
    return kept;
  }

  /** Why the candidate's provider cannot honour the request, if it cannot. */
  refusalOf(candidate: RouteCandidate, job: UnroutedJob): Refusal | undefined {
    return this.providers.get(candidate.provider)?.refuse?.({ ...job, upstreamModel: candidate.model ?? job.model });
  }

  /** Closes every provider that holds connections (shutdown). */
  async close(): Promise<void> {
    await Promise.all([...this.providers.values()].map((p) => p.close?.()));
  }
}

/** `MEDIAGATE_MODEL_ROUTES` (model -> one provider) as routes of one candidate each. */
export function routesOfShorthand(routes: Record<string, string>): Record<string, RouteCandidate[]> {
  return Object.fromEntries(Object.entries(routes).map(([model, provider]) => [model, [{ provider, priority: 0, weight: 1 }]]));
}

/**
 * Chat routes of the shorthand form (chat model -> provider id, `*` for every chat model not named)
 * as candidates; `upstreamModel` names the model at the provider, where it differs.
 */
export function chatRoutesOf(
  routes: Record<string, string>,
  upstreamModel: (model: string, provider: string) => string | undefined = () => undefined,
): Record<string, RouteCandidate[]> {
  const out: Record<string, RouteCandidate[]> = {};
  for (const model of CHAT_MODELS) {
    const provider = routes[model] ?? routes['*'];
    if (provider === undefined) continue;
    const name = upstreamModel(model, provider);
    out[model] = [{ provider, priority: 0, weight: 1, ...(name !== undefined && name !== model && { model: name }) }];
  }
  return out;
}

/** A chat-only provider as a provider of the `chat` family. */
export function chatOnlyProvider(chat: ChatProvider): Provider {
  return {
    id: chat.id,
    capabilities: { families: ['chat'] },
    chat,
    ...(chat.close && { close: () => chat.close!() }),
    ...(chat.probe && { probe: (signal: AbortSignal) => chat.probe!(signal) }),
  };
}

/**
 * `providers` with `chat` served by `chat` under the id `id` too: added to the provider of that id
 * (the sandbox makes media and chat) as its `chat`, or as a provider of its own when there is none.
 * Providers are plain objects (G404): the one of that id is copied with the chat family added.
 */
export function withChat(providers: Provider[], id: string, chat: ChatProvider): Provider[] {
  const i = providers.findIndex((p) => p.id === id);
  if (i < 0) return [...providers, chatOnlyProvider(chat)];
  const base = providers[i]!;
  if (base.chat) return providers;
  const merged: Provider = { ...base, capabilities: { ...base.capabilities, families: [...base.capabilities.families, 'chat'] }, chat };
  return providers.map((p, j) => (j === i ? merged : p));
}
