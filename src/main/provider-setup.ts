/**
 * The providers of a gateway process and the route of every model, media and chat, from the
 * configuration (docs/API.md G90): the sandbox, which makes media and chat replies itself, plus
 * the configured upstreams. Tests hand in their own providers and routes instead.
 */
import { createSandboxChatProvider } from '../chat/sandbox.js';
import type { ChatProvider } from '../chat/types.js';
import { createChatUpstreams } from '../chat/upstream-config.js';
import type { Config } from '../config.js';
import type { RouteCandidate } from '../providers/channels.js';
import { chatOnlyProvider, chatRoutesOf, routesOfShorthand, withChat } from '../providers/registry.js';
import { createSandboxProvider } from '../providers/sandbox/index.js';
import type { Provider } from '../providers/types.js';

export interface ProviderSetupOptions {
  /** Media providers; default: the sandbox. */
  providers?: Provider[];
  /** Routes over `providers` (default: `MEDIAGATE_MODEL_ROUTES`). */
  routes?: Record<string, RouteCandidate[]>;
  /** Chat providers and the provider of each chat model (`*`: every one not named); default: the configured upstreams. */
  chat?: { providers: ChatProvider[]; routes?: Record<string, string> };
}

export interface ProviderSetup {
  providers: Provider[];
  routes: Record<string, RouteCandidate[]>;
}

export function setUpProviders(config: Config, options: ProviderSetupOptions = {}): ProviderSetup {
  const media = options.providers ?? [createSandboxProvider({ timing: config.sandboxTiming })];
  const mediaRoutes = options.routes ?? routesOfShorthand(config.modelRoutes);
  const upstreams = options.chat
    ? { providers: options.chat.providers, routes: chatRoutesOf(options.chat.routes ?? {}) }
    : createChatUpstreams(config.chatUpstreams);
  // the sandbox answers chat models without a route; a chat provider named `sandbox` replaces it
  const sandboxChat = upstreams.providers.find((p) => p.id === 'sandbox') ?? createSandboxChatProvider({ tokensPerSecond: config.sandboxChatTokensPerSecond });
  const chat = upstreams.providers.filter((p) => p.id !== 'sandbox').map(chatOnlyProvider);
  return { providers: withChat([...media, ...chat], 'sandbox', sandboxChat), routes: { ...mediaRoutes, ...upstreams.routes } };
}
