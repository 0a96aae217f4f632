import { AppError } from '../errors.js';
import type { ChatProvider } from './types.js';

/** The chat providers of this process and which one answers each chat model (default: sandbox). */
export class ChatProviderRegistry {
  private readonly providers = new Map<string, ChatProvider>();

  constructor(providers: ChatProvider[], private readonly routes: Record<string, string> = {}, private readonly fallback = 'sandbox') {
    for (const p of providers) this.providers.set(p.id, p);
    for (const [model, id] of Object.entries(routes)) {
      if (!this.providers.has(id)) throw new Error(`chat model ${model} is routed to unknown provider "${id}" (known: ${[...this.providers.keys()].join(', ')})`);
    }
  }

  providerFor(model: string): ChatProvider {
    const provider = this.providers.get(this.routes[model] ?? this.routes['*'] ?? this.fallback);
    if (!provider) throw new AppError('service_unavailable', `No chat provider is configured for model ${model}`);
    return provider;
  }

  /** Closes every provider that holds connections (shutdown). */
  async close(): Promise<void> {
    await Promise.all([...this.providers.values()].map((p) => p.close?.()));
  }
}
