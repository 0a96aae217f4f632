import { Type } from '../typebox.js';
import { CHAT_MODELS } from '../contract/chat.js';
import { ConfigError, type Env } from '../config-error.js';
import { readConfigJson } from '../config-file.js';
import { createOpenAiChatProvider, type OpenAiChatProvider } from '../providers/openai/chat.js';
import type { MaxTokensParam } from '../providers/toolkit/openai-chat-wire.js';
import type { RouteCandidate } from '../contract/task-request.js';
import type { ChatProvider } from './types.js';
import { checkUpstreamUrl } from '../providers/toolkit/upstream-url.js';

export interface ChatUpstreams {
  providers: ChatProvider[];
  /** chat model -> its one candidate: the provider id and the model's name there */
  routes: Record<string, RouteCandidate[]>;
}

export const CHAT_UPSTREAM_DEFAULTS = { timeoutMs: 120_000, stallTimeoutMs: 30_000, connectTimeoutMs: 10_000 } as const;

/** One validated upstream (keys included: never log this object). */
export interface ChatUpstreamSpec {
  name: string;
  baseUrl: string;
  apiKey: string | undefined;
  /** Where the key was configured (for operator messages; never the key itself). */
  keySetting: string;
  timeoutMs: number;
  stallTimeoutMs: number;
  connectTimeoutMs: number;
  maxTokensParam: MaxTokensParam;
  /** our chat model -> upstream model */
  models: Record<string, string>;
}

const CONFIG = 'MEDIAGATE_CHAT_CONFIG';
const URL_ENV = 'MEDIAGATE_CHAT_UPSTREAM_URL';
const KEY_ENV = 'MEDIAGATE_CHAT_UPSTREAM_KEY';
const MODELS_ENV = 'MEDIAGATE_CHAT_UPSTREAM_MODELS';
/** Name of the upstream the shorthand variables describe (provider id `openai:env`). */
export const ENV_UPSTREAM_NAME = 'env';

const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
const MAX_TOKENS_PARAMS: readonly MaxTokensParam[] = ['max_completion_tokens', 'max_tokens', 'both'];
const MS_RULE = 'a whole number of milliseconds between 100 and 3600000';
const Milliseconds = Type.Optional(Type.Integer({ minimum: 100, maximum: 3_600_000, description: MS_RULE }));

/** The `MEDIAGATE_CHAT_CONFIG` file (docs/reference/providers/openai-chat.md#without-providersjson). */
export const ChatConfigFile = Type.Object(
  {
    upstreams: Type.Record(
      Type.String(),
      Type.Object(
        {
          baseUrl: Type.String({ description: 'an http(s) URL such as https://api.openai.com/v1' }),
          apiKey: Type.Optional(Type.String({ minLength: 1, secret: true, description: 'a non-empty string' })),
          apiKeyEnv: Type.Optional(Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]*$', description: 'the name of an environment variable' })),
          timeoutMs: Milliseconds,
          stallTimeoutMs: Milliseconds,
          connectTimeoutMs: Milliseconds,
          maxTokensParam: Type.Optional(
            Type.Union(
              MAX_TOKENS_PARAMS.map((p) => Type.Literal(p)),
              { description: `one of ${MAX_TOKENS_PARAMS.join(', ')}` },
            ),
          ),
        },
        { additionalProperties: false, description: 'an object { baseUrl, apiKey | apiKeyEnv, timeoutMs, ... }' },
      ),
      {
        description: 'an object of name -> { baseUrl, apiKey | apiKeyEnv, timeoutMs }',
      },
    ),
    models: Type.Record(
      Type.String(),
      Type.Object(
        {
          upstream: Type.String({ description: 'the name of one of the upstreams' }),
          model: Type.String({ pattern: '^\\S+$', description: "the upstream's model name (a non-empty string without spaces)" }),
        },
        { additionalProperties: false, description: 'an object { "upstream": "<name>", "model": "<upstream model>" }' },
      ),
      {
        description: 'an object of chat model -> { upstream, model }',
      },
    ),
  },
  { additionalProperties: false, description: 'a JSON object with "upstreams" and "models"' },
);

function checkBaseUrl(setting: string, where: string, raw: unknown): string {
  if (typeof raw !== 'string' || raw.trim() === '') throw new ConfigError(setting, `${where} is required (an http(s) URL such as https://api.openai.com/v1)`);
  return checkUpstreamUrl(setting, where, raw, 'use apiKey / apiKeyEnv');
}

function checkMs(setting: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined || raw === '') return fallback;
  const n = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isInteger(n) || n < 100 || n > 3_600_000) throw new ConfigError(setting, `the value must be ${MS_RULE}, got ${JSON.stringify(raw)}`);
  return n;
}

function checkMaxTokensParam(setting: string, raw: string | undefined): MaxTokensParam {
  if (raw === undefined || raw === '') return 'max_completion_tokens';
  if (!MAX_TOKENS_PARAMS.includes(raw as MaxTokensParam))
    throw new ConfigError(setting, `the value must be one of ${MAX_TOKENS_PARAMS.join(', ')}, got ${JSON.stringify(raw)}`);
  return raw as MaxTokensParam;
}

function checkModelName(setting: string, where: string, model: string): void {
  if (model !== '*' && !(CHAT_MODELS as readonly string[]).includes(model)) {
    throw new ConfigError(setting, `${where}: "${model}" is not a chat model (known: ${CHAT_MODELS.join(', ')}, or * for every one not named)`);
  }
}

interface Mapping {
  upstream: string;
  model: string;
  setting: string;
}

/** Reads the JSON file form (`MEDIAGATE_CHAT_CONFIG`). */
function fromFile(env: Env, file: string, upstreams: Map<string, ChatUpstreamSpec>, mappings: Map<string, Mapping>): void {
  const json = readConfigJson(CONFIG, file, ChatConfigFile);
  for (const [name, raw] of Object.entries(json.upstreams)) {
    const where = `upstreams.${name}`;
    if (!NAME_RE.test(name)) throw new ConfigError(CONFIG, `${where}: upstream names are letters, digits, ".", "_" and "-" (at most 64)`);
    if (raw.apiKey !== undefined && raw.apiKeyEnv !== undefined) throw new ConfigError(CONFIG, `${where}: set apiKey or apiKeyEnv, not both`);
    let apiKey = raw.apiKey;
    let keySetting = `${where}.apiKey in ${CONFIG}`;
    if (raw.apiKeyEnv !== undefined) {
      apiKey = env[raw.apiKeyEnv] || undefined;
      if (apiKey === undefined) throw new ConfigError(raw.apiKeyEnv, `is empty or not set, but ${where}.apiKeyEnv in ${CONFIG} names it`);
      keySetting = `the environment variable ${raw.apiKeyEnv} (${where}.apiKeyEnv)`;
    }
    const timeoutMs = raw.timeoutMs ?? CHAT_UPSTREAM_DEFAULTS.timeoutMs;
    upstreams.set(name, {
      name,
      baseUrl: checkBaseUrl(CONFIG, `${where}.baseUrl`, raw.baseUrl),
      apiKey,
      keySetting,
      timeoutMs,
      stallTimeoutMs: raw.stallTimeoutMs ?? Math.min(CHAT_UPSTREAM_DEFAULTS.stallTimeoutMs, timeoutMs),
      connectTimeoutMs: raw.connectTimeoutMs ?? Math.min(CHAT_UPSTREAM_DEFAULTS.connectTimeoutMs, timeoutMs),
      maxTokensParam: raw.maxTokensParam ?? 'max_completion_tokens',
      models: {},
    });
  }
  for (const [model, raw] of Object.entries(json.models)) {
    checkModelName(CONFIG, 'models', model);
    if (!upstreams.has(raw.upstream)) {
      throw new ConfigError(
        CONFIG,
        `models.${model}.upstream must name one of the upstreams (${[...upstreams.keys()].join(', ') || 'none defined'}), got ${JSON.stringify(raw.upstream)}`,
      );
    }
    mappings.set(model, { upstream: raw.upstream, model: raw.model, setting: CONFIG });
  }
}

/** Reads the shorthand form (`MEDIAGATE_CHAT_UPSTREAM_*`: one upstream). */
function fromEnv(env: Env, upstreams: Map<string, ChatUpstreamSpec>, mappings: Map<string, Mapping>): void {
  const url = env[URL_ENV];
  const modelsRaw = env[MODELS_ENV];
  if (!url) {
    for (const name of [
      KEY_ENV,
      MODELS_ENV,
      'MEDIAGATE_CHAT_UPSTREAM_TIMEOUT_MS',
      'MEDIAGATE_CHAT_UPSTREAM_STALL_TIMEOUT_MS',
      'MEDIAGATE_CHAT_UPSTREAM_CONNECT_TIMEOUT_MS',
      'MEDIAGATE_CHAT_UPSTREAM_MAX_TOKENS_PARAM',
    ]) {
      if (env[name]) throw new ConfigError(URL_ENV, `is required when ${name} is set`);
    }
    return;
  }
  if (upstreams.has(ENV_UPSTREAM_NAME)) throw new ConfigError(CONFIG, `the upstream name "${ENV_UPSTREAM_NAME}" is taken by ${URL_ENV}; rename it in the file`);
  if (!modelsRaw)
    throw new ConfigError(
      MODELS_ENV,
      `is required when ${URL_ENV} is set: chat-model=upstream-model pairs, comma-separated (e.g. chat-2.5-flash=gpt-4o-mini,chat-2.5-pro=gpt-4o, or *=llama3)`,
    );
  const timeoutMs = checkMs('MEDIAGATE_CHAT_UPSTREAM_TIMEOUT_MS', env.MEDIAGATE_CHAT_UPSTREAM_TIMEOUT_MS, CHAT_UPSTREAM_DEFAULTS.timeoutMs);
  upstreams.set(ENV_UPSTREAM_NAME, {
    name: ENV_UPSTREAM_NAME,
    baseUrl: checkBaseUrl(URL_ENV, 'the value', url),
    apiKey: env[KEY_ENV] || undefined,
    keySetting: KEY_ENV,
    timeoutMs,
    stallTimeoutMs: checkMs(
      'MEDIAGATE_CHAT_UPSTREAM_STALL_TIMEOUT_MS',
      env.MEDIAGATE_CHAT_UPSTREAM_STALL_TIMEOUT_MS,
      Math.min(CHAT_UPSTREAM_DEFAULTS.stallTimeoutMs, timeoutMs),
    ),
    connectTimeoutMs: checkMs(
      'MEDIAGATE_CHAT_UPSTREAM_CONNECT_TIMEOUT_MS',
      env.MEDIAGATE_CHAT_UPSTREAM_CONNECT_TIMEOUT_MS,
      Math.min(CHAT_UPSTREAM_DEFAULTS.connectTimeoutMs, timeoutMs),
    ),
    maxTokensParam: checkMaxTokensParam('MEDIAGATE_CHAT_UPSTREAM_MAX_TOKENS_PARAM', env.MEDIAGATE_CHAT_UPSTREAM_MAX_TOKENS_PARAM),
    models: {},
  });
  const seen = new Set<string>();
  for (const part of modelsRaw
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const m = /^([^=\s]+)\s*=\s*(\S+)$/.exec(part);
    if (!m) throw new ConfigError(MODELS_ENV, `entries look like chat-model=upstream-model, got "${part}"`);
    const model = m[1]!;
    checkModelName(MODELS_ENV, 'entry', model);
    if (seen.has(model)) throw new ConfigError(MODELS_ENV, `"${model}" is listed twice`);
    seen.add(model);
    const previous = mappings.get(model);
    if (previous) throw new ConfigError(MODELS_ENV, `"${model}" is also mapped in ${previous.setting}; map each chat model in one place`);
    mappings.set(model, { upstream: ENV_UPSTREAM_NAME, model: m[2]!, setting: MODELS_ENV });
  }
  if (seen.size === 0) throw new ConfigError(MODELS_ENV, 'names no model');
}

/**
 * Validated upstream specs (no connections made): the config file first, then the shorthand; `*`
 * is expanded to every chat model not named explicitly. Each spec lists only the models routed to it.
 */
export function readChatUpstreamSpecs(env: Env): ChatUpstreamSpec[] {
  const upstreams = new Map<string, ChatUpstreamSpec>();
  const mappings = new Map<string, Mapping>();
  const file = env[CONFIG];
  if (file) fromFile(env, file, upstreams, mappings);
  fromEnv(env, upstreams, mappings);
  const wildcard = mappings.get('*');
  for (const model of CHAT_MODELS) {
    const m = mappings.get(model) ?? wildcard;
    if (m) upstreams.get(m.upstream)!.models[model] = m.model;
  }
  return [...upstreams.values()].filter((u) => Object.keys(u.models).length > 0);
}

/**
 * OpenAI-compatible chat providers for validated upstream specs (docs/reference/providers/openai-chat.md,
 * G50-G59): one provider per upstream, and the route of each chat model it serves.
 * With nothing configured every chat model is answered by the sandbox. Keys are never logged.
 */
export function createChatUpstreams(specs: readonly ChatUpstreamSpec[]): ChatUpstreams {
  const providers: OpenAiChatProvider[] = [];
  const routes: Record<string, RouteCandidate[]> = {};
  for (const spec of specs) {
    const id = `openai:${spec.name}`;
    providers.push(
      createOpenAiChatProvider({
        id,
        baseUrl: spec.baseUrl,
        apiKey: spec.apiKey,
        timeoutMs: spec.timeoutMs,
        connectTimeoutMs: spec.connectTimeoutMs,
        stallTimeoutMs: spec.stallTimeoutMs,
        maxTokensParam: spec.maxTokensParam,
        keySetting: spec.keySetting,
      }),
    );
    for (const [model, upstreamModel] of Object.entries(spec.models)) routes[model] = [{ provider: id, model: upstreamModel, priority: 0, weight: 1 }];
  }
  return { providers, routes };
}

/** The chat providers an environment configures: {@link readChatUpstreamSpecs} then {@link createChatUpstreams}. */
export function loadChatUpstreams(env: Env): ChatUpstreams {
  return createChatUpstreams(readChatUpstreamSpecs(env));
}
