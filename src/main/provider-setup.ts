/**
 * The providers of a gateway process and the route of every model, media and chat (
 * G90, G120): from providers.json (`MEDIAGATE_PROVIDERS`) when it is set, else the sandbox, which
 * makes media and chat replies itself, plus the shorthand settings (`MEDIAGATE_MODEL_ROUTES`,
 * `MEDIAGATE_CHAT_CONFIG`, `MEDIAGATE_CHAT_UPSTREAM_*`). Tests hand in their own providers.
 */
import { createSandboxChatProvider } from '../chat/sandbox.js';
import type { ChatProvider } from '../chat/types.js';
import { CHAT_UPSTREAM_DEFAULTS, createChatUpstreams } from '../chat/upstream-config.js';
import type { Config } from '../config.js';
import type { RouteCandidate } from '../providers/channels.js';
import { createComfyUiProvider, type ComfyTemplate } from '../providers/comfyui/index.js';
import { createOpenAiChatProvider } from '../providers/openai/chat.js';
import { createGeminiProvider } from '../providers/gemini/index.js';
import { createFalProvider } from '../providers/fal/index.js';
import type { FalModels } from '../providers/fal/models.js';
import { createOpenAiImagesProvider } from '../providers/openai-images/index.js';
import type { ProviderSpec, ProvidersConfig } from '../providers/providers-file.js';
import { chatOnlyProvider, chatRoutesOf, routesOfShorthand, withChat } from '../providers/registry.js';
import { createRelayProvider } from '../providers/relay/index.js';
import { createReplicateProvider, type ReplicateModelsSpec } from '../providers/replicate/index.js';
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

export function setUpProviders(config: Config, options: ProviderSetupOptions = {}): ProviderSetup {
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

/** The providers of providers.json; the built-in sandbox stays available (models without a route use it) unless the file defines `sandbox`. */
function fromFile(config: Config, file: ProvidersConfig, routes?: Record<string, RouteCandidate[]>): ProviderSetup {
  const providers = file.providers.map((spec) => providerOf(config, spec));
  const types: Record<string, string> = Object.fromEntries(file.providers.map((spec) => [spec.id, spec.type]));
  if (!providers.some((p) => p.id === 'sandbox')) {
    providers.push(sandbox(config, { id: 'sandbox', type: 'sandbox' }));
    types.sandbox = 'sandbox';
  }
  return { providers, routes: routes ?? file.routes, types };
}

function providerOf(config: Config, spec: ProviderSpec): Provider {
  const concurrency = spec.concurrency !== undefined ? { concurrency: spec.concurrency } : {};
  // what every media provider of the file takes alike: calls in flight, time bounds, check interval
  const bounds = {
    ...concurrency,
    ...(spec.timeoutMs !== undefined && { timeoutMs: spec.timeoutMs }),
    ...(spec.connectTimeoutMs !== undefined && { connectTimeoutMs: spec.connectTimeoutMs }),
    ...(spec.pollSeconds !== undefined && { pollSeconds: spec.pollSeconds }),
  };
  switch (spec.type) {
    case 'sandbox':
      return sandbox(config, spec);
    case 'openai-chat': {
      const timeoutMs = spec.timeoutMs ?? CHAT_UPSTREAM_DEFAULTS.timeoutMs;
      const chat = createOpenAiChatProvider({
        id: spec.id, baseUrl: spec.baseUrl!, apiKey: spec.apiKey, timeoutMs,
        stallTimeoutMs: spec.stallTimeoutMs ?? Math.min(CHAT_UPSTREAM_DEFAULTS.stallTimeoutMs, timeoutMs),
        connectTimeoutMs: spec.connectTimeoutMs ?? Math.min(CHAT_UPSTREAM_DEFAULTS.connectTimeoutMs, timeoutMs),
        maxTokensParam: spec.maxTokensParam, keySetting: spec.keySetting,
      });
      return { ...chatOnlyProvider(chat), ...concurrency };
    }
    case 'openai-images':
      return createOpenAiImagesProvider({
        id: spec.id, baseUrl: spec.baseUrl, apiKey: spec.apiKey, ...concurrency,
        ...(spec.timeoutMs !== undefined && { timeoutMs: spec.timeoutMs }),
        ...(spec.connectTimeoutMs !== undefined && { connectTimeoutMs: spec.connectTimeoutMs }),
      });
    // `models` was checked against the type's own schema when the file was read (providers-file.ts)
    case 'replicate':
      return createReplicateProvider({
        id: spec.id, baseUrl: spec.baseUrl, apiKey: spec.apiKey, models: (spec.models ?? {}) as ReplicateModelsSpec, ...bounds,
      });
    case 'gemini':
      return createGeminiProvider({
        id: spec.id, baseUrl: spec.baseUrl, apiKey: spec.apiKey, ...bounds,
      });
    case 'fal':
      return createFalProvider({
        id: spec.id, baseUrl: spec.baseUrl, apiKey: spec.apiKey, models: (spec.models ?? {}) as FalModels, ...bounds,
        ...(spec.jwksUrl !== undefined && { jwksUrl: spec.jwksUrl }),
      });
    case 'comfyui':
      return createComfyUiProvider({
        id: spec.id, baseUrl: spec.baseUrl, apiKey: spec.apiKey, templates: spec.models as Record<string, ComfyTemplate> | undefined, ...bounds,
      });
    case 'relay':
      return createRelayProvider({
        id: spec.id, baseUrl: spec.baseUrl!, ...concurrency,
        ...(spec.powerBaseUrl !== undefined && { powerBaseUrl: spec.powerBaseUrl }),
        ...(spec.apiBaseUrl !== undefined && { apiBaseUrl: spec.apiBaseUrl }),
        ...(spec.apiKey !== undefined && { apiKey: spec.apiKey }),
        ...(spec.timeoutMs !== undefined && { timeoutMs: spec.timeoutMs }),
        ...(spec.connectTimeoutMs !== undefined && { connectTimeoutMs: spec.connectTimeoutMs }),
        ...(spec.chatTimeoutMs !== undefined && { chatTimeoutMs: spec.chatTimeoutMs }),
        ...(spec.stallTimeoutMs !== undefined && { chatStallTimeoutMs: spec.stallTimeoutMs }),
        ...(spec.pollSeconds !== undefined && { pollSeconds: spec.pollSeconds }),
      });
  }
}

/** A sandbox making media and chat replies, at the file's or the environment's timing. */
function sandbox(config: Config, spec: ProviderSpec): Provider {
  const media = createSandboxProvider({ id: spec.id, timing: spec.timing ?? config.sandboxTiming, ...(spec.concurrency !== undefined && { concurrency: spec.concurrency }) });
  const chat = createSandboxChatProvider({ tokensPerSecond: spec.chatTokensPerSecond ?? config.sandboxChatTokensPerSecond });
  return withChat([media], spec.id, chat)[0]!;
}
