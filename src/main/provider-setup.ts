/**
 * The providers of a gateway process and the route of every model, media and chat (
 * G90, G120): from providers.json (`MEDIAGATE_PROVIDERS`) when it is set, else the sandbox, which
 * makes media and chat replies itself, plus the shorthand settings (`MEDIAGATE_MODEL_ROUTES`,
 * `MEDIAGATE_CHAT_CONFIG`, `MEDIAGATE_CHAT_UPSTREAM_*`). Tests hand in their own providers.
 */
import { createSandboxChatProvider } from '../chat/sandbox.js';
import type { ChatProvider } from '../chat/types.js';
import { createChatUpstreams } from '../chat/upstream-config.js';
import type { Config } from '../config.js';
import type { RouteCandidate } from '../contract/task-request.js';
import type { ProvidersConfig } from '../providers/providers-file.js';
import { chatOnlyProvider, chatRoutesOf, routesOfShorthand, withChat } from '../providers/registry.js';
import { sandboxWithChat } from '../providers/sandbox/factory.js';
import { createSandboxProvider } from '../providers/sandbox/index.js';
import type { Provider } from '../providers/types.js';

export interface ProviderSetupOptions {
  /** Media providers; default: from the configuration. */
  providers?: Provider[];
  /** Routes over `providers` (default: from the configuration). */
  routes?: Record<string, RouteCandidate[]>;
  /** Chat providers and the provider of each chat model (`*`: every one not named); default: from the configuration. */
  chat?: { providers: ChatProvider[]; routes?: Record<string, string> };
}

export interface ProviderSetup {
  providers: Provider[];
  routes: Record<string, RouteCandidate[]>;
  /** Each provider's type (providers.json `type`), where it is known: providers tests hand in have none. */
  types: Record<string, string>;
}

export async function setUpProviders(config: Config, options: ProviderSetupOptions = {}): Promise<ProviderSetup> {
  if (config.providers && !options.providers && !options.chat) return fromFile(config, config.providers, options.routes);
  const media = options.providers ?? [createSandboxProvider({ timing: config.sandboxTiming })];
  const mediaRoutes = options.routes ?? routesOfShorthand(config.modelRoutes);
  const upstreams = options.chat
    ? { providers: options.chat.providers, routes: chatRoutesOf(options.chat.routes ?? {}) }
    : createChatUpstreams(config.chatUpstreams);
  // the sandbox answers chat models without a route; a chat provider named `sandbox` replaces it
  const sandboxChat = upstreams.providers.find((p) => p.id === 'sandbox') ?? createSandboxChatProvider({ tokensPerSecond: config.sandboxChatTokensPerSecond });
  const chat = upstreams.providers.filter((p) => p.id !== 'sandbox').map(chatOnlyProvider);
  const types: Record<string, string> = Object.fromEntries(options.chat ? [] : chat.map((p) => [p.id, 'openai-chat']));
  if (!options.providers) types.sandbox = 'sandbox';
  return { providers: withChat([...media, ...chat], 'sandbox', sandboxChat), routes: { ...mediaRoutes, ...upstreams.routes }, types };
}

/** The providers of providers.json, each made by its type's factory; the built-in sandbox stays available (models without a route use it) unless the file defines `sandbox`. */
async function fromFile(config: Config, file: ProvidersConfig, routes?: Record<string, RouteCandidate[]>): Promise<ProviderSetup> {
  const defaults = { sandboxTiming: config.sandboxTiming, sandboxChatTokensPerSecond: config.sandboxChatTokensPerSecond };
  const providers = await file.create(defaults);
  const types: Record<string, string> = Object.fromEntries(file.providers.map((spec) => [spec.id, spec.type]));
  if (!providers.some((p) => p.id === 'sandbox')) {
    providers.push(sandboxWithChat({}, { ...defaults, id: 'sandbox' }));
    types.sandbox = 'sandbox';
  }
  return { providers, routes: routes ?? file.routes, types };
}
