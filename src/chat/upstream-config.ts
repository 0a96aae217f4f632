import fs from 'node:fs';
import path from 'node:path';
import { ConfigError, type Env } from '../config.js';
import { createOpenAiChatProvider, type MaxTokensParam, type OpenAiChatProvider } from '../providers/openai/chat.js';
import type { ChatProvider } from './types.js';

export interface ChatUpstreams {
  providers: ChatProvider[];
  /** chat model -> provider id */
  routes: Record<string, string>;
}

/** The six chat models of the catalog (interface.md). */
export const CHAT_MODELS = [
  'chat-3-flash-preview', 'chat-2.5-flash-lite', 'chat-2.5-flash', 'chat-3.1-pro-preview', 'chat-3-pro-preview', 'chat-2.5-pro',
] as const;

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

function checkBaseUrl(setting: string, where: string, raw: unknown): string {
  if (typeof raw !== 'string' || raw.trim() === '') throw new ConfigError(setting, `${where} is required (an http(s) URL such as https://api.openai.com/v1)`);
  let u: URL;
  try {
    u = new URL(raw.trim());
  } catch {
    throw new ConfigError(setting, `${where} must be an absolute http(s) URL, got "${raw}"`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new ConfigError(setting, `${where} must be an http(s) URL, got "${raw}"`);
  if (u.username || u.password) throw new ConfigError(setting, `${where} must not contain credentials (use apiKey / apiKeyEnv)`);
  if (u.search || u.hash) throw new ConfigError(setting, `${where} must not have a query or fragment, got "${raw}"`);
  return u.toString().replace(/\/+$/, '');
}

function checkMs(setting: string, where: string, raw: unknown, fallback: number, min = 100, max = 3_600_000): number {
  if (raw === undefined || raw === '') return fallback;
  const n = typeof raw === 'string' && /^\d+$/.test(raw) ? Number(raw) : raw;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < min || n > max) {
    throw new ConfigError(setting, `${where} must be a whole number of milliseconds between ${min} and ${max}, got ${JSON.stringify(raw)}`);
  }
  return n;
}

function checkMaxTokensParam(setting: string, where: string, raw: unknown): MaxTokensParam {
  if (raw === undefined || raw === '') return 'max_completion_tokens';
  if (!MAX_TOKENS_PARAMS.includes(raw as MaxTokensParam)) throw new ConfigError(setting, `${where} must be one of ${MAX_TOKENS_PARAMS.join(', ')}, got ${JSON.stringify(raw)}`);
  return raw as MaxTokensParam;
}

function checkModelName(setting: string, where: string, model: string): void {
  if (model !== '*' && !(CHAT_MODELS as readonly string[]).includes(model)) {
    throw new ConfigError(setting, `${where}: "${model}" is not a chat model (known: ${CHAT_MODELS.join(', ')}, or * for every one not named)`);
  }
}

function checkUpstreamModel(setting: string, where: string, raw: unknown): string {
  if (typeof raw !== 'string' || raw.trim() === '' || /\s/.test(raw.trim())) throw new ConfigError(setting, `${where} must be the upstream's model name (a non-empty string without spaces)`);
  return raw.trim();
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function onlyKeys(setting: string, where: string, obj: Record<string, unknown>, allowed: string[]): void {
  for (const k of Object.keys(obj)) {
    if (!allowed.includes(k)) throw new ConfigError(setting, `${where} has an unknown field "${k}" (allowed: ${allowed.join(', ')})`);
  }
}

interface Mapping { upstream: string; model: string; setting: string }

/** Reads the JSON file form (`MEDIAGATE_CHAT_CONFIG`). */
function fromFile(env: Env, file: string, upstreams: Map<string, ChatUpstreamSpec>, mappings: Map<string, Mapping>): void {
  let text: string;
  try {
    text = fs.readFileSync(path.resolve(file), 'utf8');
  } catch (err) {
    throw new ConfigError(CONFIG, `cannot read "${file}": ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(CONFIG, `"${file}" is not valid JSON: ${(err as Error).message}`);
  }
  if (!isObject(json)) throw new ConfigError(CONFIG, `"${file}" must hold a JSON object with "upstreams" and "models"`);
  onlyKeys(CONFIG, 'the file', json, ['upstreams', 'models']);
  if (!isObject(json.upstreams)) throw new ConfigError(CONFIG, 'upstreams is required: an object of name -> { baseUrl, apiKey | apiKeyEnv, timeoutMs }');
  if (!isObject(json.models)) throw new ConfigError(CONFIG, 'models is required: an object of chat model -> { upstream, model }');
  for (const [name, raw] of Object.entries(json.upstreams)) {
    const where = `upstreams.${name}`;
    if (!NAME_RE.test(name)) throw new ConfigError(CONFIG, `${where}: upstream names are letters, digits, ".", "_" and "-" (at most 64)`);
    if (!isObject(raw)) throw new ConfigError(CONFIG, `${where} must be an object`);
    onlyKeys(CONFIG, where, raw, ['baseUrl', 'apiKey', 'apiKeyEnv', 'timeoutMs', 'stallTimeoutMs', 'connectTimeoutMs', 'maxTokensParam']);
    if (raw.apiKey !== undefined && raw.apiKeyEnv !== undefined) throw new ConfigError(CONFIG, `${where}: set apiKey or apiKeyEnv, not both`);
    let apiKey: string | undefined;
    let keySetting = `${where}.apiKey in ${CONFIG}`;
    if (raw.apiKey !== undefined) {
      if (typeof raw.apiKey !== 'string' || raw.apiKey === '') throw new ConfigError(CONFIG, `${where}.apiKey must be a non-empty string`);
      apiKey = raw.apiKey;
    } else if (raw.apiKeyEnv !== undefined) {
      if (typeof raw.apiKeyEnv !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(raw.apiKeyEnv)) throw new ConfigError(CONFIG, `${where}.apiKeyEnv must be the name of an environment variable`);
      apiKey = env[raw.apiKeyEnv] || undefined;
      if (apiKey === undefined) throw new ConfigError(raw.apiKeyEnv, `is empty or not set, but ${where}.apiKeyEnv in ${CONFIG} names it`);
      keySetting = `the environment variable ${raw.apiKeyEnv} (${where}.apiKeyEnv)`;
    }
    const timeoutMs = checkMs(CONFIG, `${where}.timeoutMs`, raw.timeoutMs, CHAT_UPSTREAM_DEFAULTS.timeoutMs);
    upstreams.set(name, {
      name,
      baseUrl: checkBaseUrl(CONFIG, `${where}.baseUrl`, raw.baseUrl),
      apiKey,
      keySetting,
      timeoutMs,
      stallTimeoutMs: checkMs(CONFIG, `${where}.stallTimeoutMs`, raw.stallTimeoutMs, Math.min(CHAT_UPSTREAM_DEFAULTS.stallTimeoutMs, timeoutMs)),
      connectTimeoutMs: checkMs(CONFIG, `${where}.connectTimeoutMs`, raw.connectTimeoutMs, Math.min(CHAT_UPSTREAM_DEFAULTS.connectTimeoutMs, timeoutMs)),
      maxTokensParam: checkMaxTokensParam(CONFIG, `${where}.maxTokensParam`, raw.maxTokensParam),
      models: {},
    });
  }
  for (const [model, raw] of Object.entries(json.models)) {
    const where = `models.${model}`;
    checkModelName(CONFIG, 'models', model);
    if (!isObject(raw)) throw new ConfigError(CONFIG, `${where} must be an object { "upstream": "<name>", "model": "<upstream model>" }`);
    onlyKeys(CONFIG, where, raw, ['upstream', 'model']);
    if (typeof raw.upstream !== 'string' || !upstreams.has(raw.upstream)) {
      throw new ConfigError(CONFIG, `${where}.upstream must name one of the upstreams (${[...upstreams.keys()].join(', ') || 'none defined'}), got ${JSON.stringify(raw.upstream)}`);
    }
    mappings.set(model, { upstream: raw.upstream, model: checkUpstreamModel(CONFIG, `${where}.model`, raw.model), setting: CONFIG });
  }
}

/** Reads the shorthand form (`MEDIAGATE_CHAT_UPSTREAM_*`: one upstream). */
function fromEnv(env: Env, upstreams: Map<string, ChatUpstreamSpec>, mappings: Map<string, Mapping>): void {
  const url = env[URL_ENV];
  const modelsRaw = env[MODELS_ENV];
  if (!url) {
    for (const name of [KEY_ENV, MODELS_ENV, 'MEDIAGATE_CHAT_UPSTREAM_TIMEOUT_MS', 'MEDIAGATE_CHAT_UPSTREAM_STALL_TIMEOUT_MS', 'MEDIAGATE_CHAT_UPSTREAM_CONNECT_TIMEOUT_MS', 'MEDIAGATE_CHAT_UPSTREAM_MAX_TOKENS_PARAM']) {
      if (env[name]) throw new ConfigError(URL_ENV, `is required when ${name} is set`);
    }
    return;
  }
  if (upstreams.has(ENV_UPSTREAM_NAME)) throw new ConfigError(CONFIG, `the upstream name "${ENV_UPSTREAM_NAME}" is taken by ${URL_ENV}; rename it in the file`);
  if (!modelsRaw) throw new ConfigError(MODELS_ENV, `is required when ${URL_ENV} is set: chat-model=upstream-model pairs, comma-separated (e.g. chat-2.5-flash=gpt-4o-mini,chat-2.5-pro=gpt-4o, or *=llama3)`);
  const timeoutMs = checkMs('MEDIAGATE_CHAT_UPSTREAM_TIMEOUT_MS', 'the value', env.MEDIAGATE_CHAT_UPSTREAM_TIMEOUT_MS, CHAT_UPSTREAM_DEFAULTS.timeoutMs);
  upstreams.set(ENV_UPSTREAM_NAME, {
    name: ENV_UPSTREAM_NAME,
    baseUrl: checkBaseUrl(URL_ENV, 'the value', url),
    apiKey: env[KEY_ENV] || undefined,
    keySetting: KEY_ENV,
    timeoutMs,
    stallTimeoutMs: checkMs('MEDIAGATE_CHAT_UPSTREAM_STALL_TIMEOUT_MS', 'the value', env.MEDIAGATE_CHAT_UPSTREAM_STALL_TIMEOUT_MS, Math.min(CHAT_UPSTREAM_DEFAULTS.stallTimeoutMs, timeoutMs)),
    connectTimeoutMs: checkMs('MEDIAGATE_CHAT_UPSTREAM_CONNECT_TIMEOUT_MS', 'the value', env.MEDIAGATE_CHAT_UPSTREAM_CONNECT_TIMEOUT_MS, Math.min(CHAT_UPSTREAM_DEFAULTS.connectTimeoutMs, timeoutMs)),
    maxTokensParam: checkMaxTokensParam('MEDIAGATE_CHAT_UPSTREAM_MAX_TOKENS_PARAM', 'the value', env.MEDIAGATE_CHAT_UPSTREAM_MAX_TOKENS_PARAM),
    models: {},
  });
  const seen = new Set<string>();
  for (const part of modelsRaw.split(',').map((p) => p.trim()).filter(Boolean)) {
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
 * OpenAI-compatible upstreams for chat models, from the environment / config file (README "Chat
 * upstreams", docs/API.md G50-G59). With nothing configured every chat model is answered by the
 * sandbox. Keys are never logged; a bad setting throws a ConfigError naming it.
 */
export function loadChatUpstreams(env: Record<string, string | undefined>): ChatUpstreams {
  const providers: OpenAiChatProvider[] = [];
  const routes: Record<string, string> = {};
  for (const spec of readChatUpstreamSpecs(env)) {
    const id = `openai:${spec.name}`;
    providers.push(createOpenAiChatProvider({
      id, baseUrl: spec.baseUrl, apiKey: spec.apiKey, models: spec.models, timeoutMs: spec.timeoutMs,
      connectTimeoutMs: spec.connectTimeoutMs, stallTimeoutMs: spec.stallTimeoutMs, maxTokensParam: spec.maxTokensParam,
      keySetting: spec.keySetting,
    }));
    for (const model of Object.keys(spec.models)) routes[model] = id;
  }
  return { providers, routes };
}
