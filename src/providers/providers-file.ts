/**
 * `MEDIAGATE_PROVIDERS=path/to/providers.json` (docs/reference/providers/README.md, G90): the
 * providers (channels) of the gateway, media and chat alike, and the route of each model. Read and
 * checked once at start: any mistake (an unknown type or field, a field another type takes, a bad
 * URL, a route to a provider that does not exist or cannot serve that model's family, an unset key
 * variable) is a ConfigError naming it. Keys come from environment variables and are never quoted.
 */
import path from 'node:path';
import { Type, type Static } from '@sinclair/typebox';
import { findModel } from '../contract/catalog.js';
import { CHAT_MODELS } from '../contract/chat.js';
import { FAMILIES } from '../contract/families.js';
import { findModelCenterModel } from '../contract/model-center-catalog.js';
import { ConfigError, type Env } from '../config-error.js';
import { checkConfigJson, readConfigJson } from '../config-file.js';
import type { RouteCandidate } from './channels.js';
import { builtInTemplates, COMFYUI_DEFAULTS, ComfyModels, loadTemplates, type ComfyTemplate } from './comfyui/index.js';
import { GEMINI_DEFAULTS } from './gemini/index.js';
import { FAL_DEFAULTS } from './fal/index.js';
import { FalModels } from './fal/models.js';
import { OPENAI_IMAGES_DEFAULTS } from './openai-images/index.js';
import { entryProblem, REPLICATE_DEFAULTS, ReplicateModels, type ReplicateModelsSpec } from './replicate/index.js';
import type { PollSeconds, ServiceFamily } from './types.js';

export const SETTING = 'MEDIAGATE_PROVIDERS';

export const PROVIDER_TYPES = ['relay', 'openai-chat', 'openai-images', 'replicate', 'gemini', 'fal', 'comfyui', 'sandbox'] as const;
export type ProviderType = (typeof PROVIDER_TYPES)[number];

/** What each type serves. */
export const TYPE_FAMILIES: Record<ProviderType, readonly ServiceFamily[]> = {
  relay: [...FAMILIES, 'chat'],
  'openai-chat': ['chat'],
  'openai-images': ['pic', 'model-center'],
  replicate: [...FAMILIES],
  gemini: ['pic', 'clip', 'model-center'],
  fal: [...FAMILIES],
  comfyui: [...FAMILIES],
  sandbox: [...FAMILIES, 'chat'],
};

const MS_RULE = 'a whole number of milliseconds between 100 and 3600000';
const Milliseconds = (description = MS_RULE) => Type.Optional(Type.Integer({ minimum: 100, maximum: 3_600_000, description }));
const Url = (description: string) => Type.Optional(Type.String({ description }));
const Seconds = Type.Number({ minimum: 0.05, maximum: 3600, description: 'seconds between 0.05 and 3600' });

const ProviderEntry = Type.Object({
  type: Type.Union(PROVIDER_TYPES.map((t) => Type.Literal(t)), { description: `one of ${PROVIDER_TYPES.join(', ')}` }),
  baseUrl: Url('an http(s) URL: {base_url} of the upstream (relay), or up to the API version for openai-chat, openai-images (default https://api.openai.com/v1) and gemini (default https://generativelanguage.googleapis.com/v1beta)'),
  powerBaseUrl: Url('an http(s) URL: {power_base_url} of the upstream (default baseUrl)'),
  apiBaseUrl: Url('an http(s) URL: {api_base_url} of the upstream (default baseUrl)'),
  apiKeyEnv: Type.Optional(Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]*$', description: 'the name of an environment variable holding the key' })),
  concurrency: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000, description: 'a whole number of calls between 1 and 10000' })),
  timeoutMs: Milliseconds(),
  connectTimeoutMs: Milliseconds(),
  stallTimeoutMs: Milliseconds(),
  chatTimeoutMs: Milliseconds(),
  pollSeconds: Type.Optional(Type.Union([
    Seconds,
    Type.Object(Object.fromEntries(FAMILIES.map((f) => [f, Type.Optional(Seconds)])), { additionalProperties: false, description: `an object of family -> seconds (families: ${FAMILIES.join(', ')})` }),
  ], { description: 'seconds between checks (0.05-3600), or an object of family -> seconds' })),
  maxTokensParam: Type.Optional(Type.Union(['max_completion_tokens', 'max_tokens', 'both'].map((p) => Type.Literal(p)), { description: 'one of max_completion_tokens, max_tokens, both' })),
  timing: Type.Optional(Type.Union(['instant', 'fast', 'realistic'].map((p) => Type.Literal(p)), { description: 'one of instant, fast, realistic' })),
  chatTokensPerSecond: Type.Optional(Type.Number({ minimum: 0, maximum: 100_000, description: 'tokens per second between 0 (unlimited) and 100000' })),
  models: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'replicate, fal and comfyui: an object of model name -> its input mapping or workflow template (the shape of each type: README)' })),
  jwksUrl: Url('an http(s) URL: where fal publishes the keys of its webhook signatures (default https://rest.alpha.fal.ai/.well-known/jwks.json)'),
}, { additionalProperties: false, description: 'an object { type, baseUrl, apiKeyEnv, ... }' });

const Candidate = Type.Object({
  provider: Type.String({ minLength: 1, description: 'the id of one of the providers' }),
  model: Type.Optional(Type.String({ pattern: '^\\S+$', description: "the model's name at that provider (no spaces)" })),
  priority: Type.Optional(Type.Integer({ minimum: 0, maximum: 1000, description: 'a whole number 0-1000 (lower is tried first; default: its position in the list)' })),
  weight: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 1_000_000, description: 'a positive number (share of the load among equal priorities; default 1)' })),
}, { additionalProperties: false, description: 'an object { provider, model?, priority?, weight? }' });

export const ProvidersFile = Type.Object({
  providers: Type.Record(Type.String(), ProviderEntry, { description: 'an object of provider id -> { type, ... }' }),
  routes: Type.Optional(Type.Record(Type.String(), Type.Array(Candidate, { minItems: 1, maxItems: 32, description: 'a list of 1 to 32 candidates' }), {
    description: 'an object of model (or *) -> [candidates]',
  })),
}, { additionalProperties: false, description: 'a JSON object with "providers" and "routes"' });

type ProviderEntry = Static<typeof ProviderEntry>;

/** Fields each type takes besides `type`, `concurrency` and `apiKeyEnv` (which all take). */
const TYPE_FIELDS: Record<ProviderType, ReadonlyArray<keyof ProviderEntry>> = {
  relay: ['baseUrl', 'powerBaseUrl', 'apiBaseUrl', 'timeoutMs', 'connectTimeoutMs', 'stallTimeoutMs', 'chatTimeoutMs', 'pollSeconds'],
  'openai-chat': ['baseUrl', 'timeoutMs', 'connectTimeoutMs', 'stallTimeoutMs', 'maxTokensParam'],
  'openai-images': ['baseUrl', 'timeoutMs', 'connectTimeoutMs'],
  replicate: ['baseUrl', 'timeoutMs', 'connectTimeoutMs', 'pollSeconds', 'models'],
  gemini: ['baseUrl', 'timeoutMs', 'connectTimeoutMs', 'pollSeconds'],
  fal: ['baseUrl', 'timeoutMs', 'connectTimeoutMs', 'pollSeconds', 'models', 'jwksUrl'],
  comfyui: ['baseUrl', 'timeoutMs', 'connectTimeoutMs', 'pollSeconds', 'models'],
  sandbox: ['timing', 'chatTokensPerSecond'],
};
const COMMON_FIELDS: ReadonlyArray<keyof ProviderEntry> = ['type', 'concurrency', 'apiKeyEnv'];

/** One validated provider (its key resolved: never log this object). */
export interface ProviderSpec {
  id: string;
  type: ProviderType;
  baseUrl?: string;
  powerBaseUrl?: string;
  apiBaseUrl?: string;
  apiKey?: string;
  /** Where the key comes from, for operator messages (never the key). */
  keySetting?: string;
  concurrency?: number;
  timeoutMs?: number;
  connectTimeoutMs?: number;
  stallTimeoutMs?: number;
  chatTimeoutMs?: number;
  pollSeconds?: PollSeconds;
  maxTokensParam?: 'max_completion_tokens' | 'max_tokens' | 'both';
  timing?: 'instant' | 'fast' | 'realistic';
  chatTokensPerSecond?: number;
  /**
   * replicate and fal: the input mapping of each model name its routes give it (checked against the
   * type's own schema); comfyui: its templates, workflows read and slots checked.
   */
  models?: ReplicateModelsSpec | FalModels | Record<string, ComfyTemplate>;
  /** fal: where its webhook keys are published (G160). */
  jwksUrl?: string;
}

export interface ProvidersConfig {
  providers: ProviderSpec[];
  routes: Record<string, RouteCandidate[]>;
}

/** An http(s) URL without credentials, query or fragment, without a trailing slash. */
export function checkUpstreamUrl(setting: string, where: string, raw: string): string {
  let u: URL;
  try {
    u = new URL(raw.trim());
  } catch {
    throw new ConfigError(setting, `${where} must be an absolute http(s) URL, got "${raw}"`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new ConfigError(setting, `${where} must be an http(s) URL, got "${raw}"`);
  if (u.username || u.password) throw new ConfigError(setting, `${where} must not contain credentials (name the key's variable in apiKeyEnv)`);
  if (u.search || u.hash) throw new ConfigError(setting, `${where} must not have a query or fragment, got "${raw}"`);
  return u.toString().replace(/\/+$/, '');
}

const serves = (type: ProviderType, family: ServiceFamily): boolean => TYPE_FAMILIES[type].includes(family);

/** The family a model name belongs to, or undefined for a name no family knows. */
export function familyOfModel(model: string): ServiceFamily | undefined {
  if ((CHAT_MODELS as readonly string[]).includes(model)) return 'chat';
  return findModel(model)?.family;
}

const ID_RE = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/;

/** What a model makes, for a route to a comfyui template: undefined for a chat model or `*`. */
function kindOfModel(model: string): 'image' | 'video' | undefined {
  const family = familyOfModel(model);
  if (family === undefined || family === 'chat') return undefined;
  if (family === 'pic') return 'image';
  if (family === 'model-center') return findModelCenterModel(model)?.kind;
  return 'video';
}

/** A comfyui provider's templates: `models` checked against its schema, each workflow read (relative to providers.json) and its slots checked. */
function comfyTemplates(where: string, id: string, models: unknown, baseDir: string): Record<string, ComfyTemplate> {
  const specs = checkConfigJson(SETTING, ComfyModels, models, `/providers/${id}/models`);
  try {
    return loadTemplates(specs, baseDir);
  } catch (err) {
    throw new ConfigError(SETTING, `${where}.models.${(err as Error).message}`);
  }
}

function providerSpec(env: Env, id: string, entry: ProviderEntry, baseDir: string): ProviderSpec {
  const where = `providers.${id}`;
  if (!ID_RE.test(id)) throw new ConfigError(SETTING, `${where}: provider ids are letters, digits, "_", ".", ":" and "-", starting with a letter or digit, at most 64, got ${JSON.stringify(id)}`);
  const allowed = [...COMMON_FIELDS, ...TYPE_FIELDS[entry.type]];
  for (const field of Object.keys(entry) as Array<keyof ProviderEntry>) {
    if (!allowed.includes(field)) {
      const takers = PROVIDER_TYPES.filter((t) => TYPE_FIELDS[t].includes(field));
      throw new ConfigError(SETTING, `${where}.${field} does not apply to type ${entry.type} (it is a setting of ${takers.join(', ')}; ${entry.type} takes ${TYPE_FIELDS[entry.type].join(', ')})`);
    }
  }
  const spec: ProviderSpec = { ...entry, id } as ProviderSpec;
  delete (spec as { apiKeyEnv?: string }).apiKeyEnv;
  if (entry.type === 'openai-images') spec.baseUrl = checkUpstreamUrl(SETTING, `${where}.baseUrl`, entry.baseUrl ?? OPENAI_IMAGES_DEFAULTS.baseUrl);
  else if (entry.type === 'replicate') {
    spec.baseUrl = checkUpstreamUrl(SETTING, `${where}.baseUrl`, entry.baseUrl ?? REPLICATE_DEFAULTS.baseUrl);
    if (!entry.models || Object.keys(entry.models).length === 0) throw new ConfigError(SETTING, `${where}.models is required for type replicate: an object of model name -> { model or version, output, input, constants? }`);
    const models = checkConfigJson(SETTING, ReplicateModels, entry.models, `/providers/${id}/models`);
    spec.models = models;
    for (const [name, model] of Object.entries(models)) {
      const problem = entryProblem(model);
      if (problem) throw new ConfigError(SETTING, `${where}.models.${name} ${problem}`);
    }
  }
  else if (entry.type === 'gemini') spec.baseUrl = checkUpstreamUrl(SETTING, `${where}.baseUrl`, entry.baseUrl ?? GEMINI_DEFAULTS.baseUrl);
  else if (entry.type === 'fal') {
    spec.baseUrl = checkUpstreamUrl(SETTING, `${where}.baseUrl`, entry.baseUrl ?? FAL_DEFAULTS.baseUrl);
    if (entry.models !== undefined) spec.models = checkConfigJson(SETTING, FalModels, entry.models, `/providers/${id}/models`);
    if (entry.jwksUrl !== undefined) spec.jwksUrl = checkUpstreamUrl(SETTING, `${where}.jwksUrl`, entry.jwksUrl);
  }
  else if (entry.type === 'comfyui') {
    spec.baseUrl = checkUpstreamUrl(SETTING, `${where}.baseUrl`, entry.baseUrl ?? COMFYUI_DEFAULTS.baseUrl);
    spec.models = entry.models === undefined ? {} : comfyTemplates(where, id, entry.models, baseDir);
  }
  else if (entry.type !== 'sandbox') {
    if (entry.baseUrl === undefined) throw new ConfigError(SETTING, `${where}.baseUrl is required for type ${entry.type}`);
    spec.baseUrl = checkUpstreamUrl(SETTING, `${where}.baseUrl`, entry.baseUrl);
  }
  if (entry.powerBaseUrl !== undefined) spec.powerBaseUrl = checkUpstreamUrl(SETTING, `${where}.powerBaseUrl`, entry.powerBaseUrl);
  if (entry.apiBaseUrl !== undefined) spec.apiBaseUrl = checkUpstreamUrl(SETTING, `${where}.apiBaseUrl`, entry.apiBaseUrl);
  if (entry.stallTimeoutMs !== undefined && entry.timeoutMs !== undefined && entry.type === 'openai-chat' && entry.stallTimeoutMs > entry.timeoutMs) {
    throw new ConfigError(SETTING, `${where}.stallTimeoutMs (${entry.stallTimeoutMs}) must not exceed timeoutMs (${entry.timeoutMs})`);
  }
  if (entry.apiKeyEnv !== undefined) {
    const key = env[entry.apiKeyEnv];
    if (!key) throw new ConfigError(entry.apiKeyEnv, `is empty or not set, but ${where}.apiKeyEnv in ${SETTING} names it`);
    spec.apiKey = key;
    spec.keySetting = `the environment variable ${entry.apiKeyEnv} (${where}.apiKeyEnv)`;
  }
  return spec;
}

function routeCandidates(specs: Map<string, ProviderSpec>, model: string, list: Static<typeof Candidate>[]): RouteCandidate[] {
  const where = `routes.${model}`;
  const family = model === '*' ? undefined : familyOfModel(model);
  if (model !== '*' && family === undefined) {
    throw new ConfigError(SETTING, `${where}: "${model}" is not a model of this interface (a model id of a family's model table, a chat model, or * for every model without a route of its own)`);
  }
  const seen = new Set<string>();
  return list.map((c, i) => {
    const spec = specs.get(c.provider);
    if (!spec) throw new ConfigError(SETTING, `${where}[${i}].provider must name one of the providers (${[...specs.keys()].join(', ')}), got ${JSON.stringify(c.provider)}`);
    if (family !== undefined && !serves(spec.type, family)) {
      throw new ConfigError(SETTING, `${where}[${i}]: provider "${c.provider}" (type ${spec.type}) cannot serve ${model}, a ${family} model (${spec.type} serves ${TYPE_FAMILIES[spec.type].join(', ')})`);
    }
    if (spec.type === 'openai-images' && findModelCenterModel(model)?.kind === 'video') {
      throw new ConfigError(SETTING, `${where}[${i}]: provider "${c.provider}" (type openai-images) makes images; ${model} is a Model Center video model`);
    }
    const mapped = spec.type === 'replicate' ? c.model ?? (model === '*' ? undefined : model) : undefined;
    if (mapped !== undefined && !Object.hasOwn(spec.models ?? {}, mapped)) {
      throw new ConfigError(SETTING, `${where}[${i}]: provider "${c.provider}" (type replicate) has no models entry "${mapped}" (it has ${Object.keys(spec.models ?? {}).join(', ')})`);
    }
    if (spec.type === 'fal' && model !== '*' && !spec.models?.[c.model ?? model]) {
      throw new ConfigError(SETTING, `${where}[${i}]: provider "${c.provider}" (type fal) has no entry in its "models" for ${JSON.stringify(c.model ?? model)} (give the fal model id as the candidate's "model" and its input mapping under providers.${c.provider}.models)`);
    }
    if (spec.type === 'comfyui') comfyRouteCheck(where, i, c, spec, model);
    if (seen.has(c.provider)) throw new ConfigError(SETTING, `${where}[${i}]: provider "${c.provider}" is listed twice`);
    seen.add(c.provider);
    return { provider: c.provider, priority: c.priority ?? i, weight: c.weight ?? 1, ...(c.model !== undefined && { model: c.model }) };
  });
}

/** A route to a comfyui provider names one of its templates (or a built-in one), of the kind the model makes. */
function comfyRouteCheck(where: string, i: number, c: Static<typeof Candidate>, spec: ProviderSpec, model: string): void {
  const templates: Record<string, ComfyTemplate> = { ...builtInTemplates(), ...(spec.models as Record<string, ComfyTemplate>) };
  const names = Object.keys(templates);
  if (c.model !== undefined && !names.includes(c.model)) {
    throw new ConfigError(SETTING, `${where}[${i}]: provider "${c.provider}" (type comfyui) has no template "${c.model}" (it has ${names.join(', ')}; add one under providers.${c.provider}.models)`);
  }
  const kind = model === '*' ? undefined : kindOfModel(model);
  const makes = c.model !== undefined ? templates[c.model]!.makes : kind;
  if (kind !== undefined && makes !== kind) {
    throw new ConfigError(SETTING, `${where}[${i}]: the ComfyUI template "${c.model}" of provider "${c.provider}" makes ${makes === 'image' ? 'images' : 'videos'}; ${model} makes ${kind === 'image' ? 'images' : 'videos'}`);
  }
}

/** Settings the file replaces, and how to move each into it. */
const SHORTHANDS: Record<string, string> = {
  MEDIAGATE_MODEL_ROUTES: 'write its model=provider pairs as "routes" in the file ("<model>": [{ "provider": "<id>" }])',
  MEDIAGATE_CHAT_CONFIG: 'describe each of its upstreams in the file as a provider of type openai-chat ({ "type": "openai-chat", "baseUrl": ..., "apiKeyEnv": ... }) and its "models" as routes ("<chat model>": [{ "provider": "<id>", "model": "<upstream model>" }])',
  MEDIAGATE_CHAT_UPSTREAM_URL: 'describe that upstream in the file as a provider of type openai-chat ({ "type": "openai-chat", "baseUrl": ..., "apiKeyEnv": "<the variable holding its key>" }) and MEDIAGATE_CHAT_UPSTREAM_MODELS as routes',
};

/** The file named by MEDIAGATE_PROVIDERS, validated (keys resolved), or undefined when it is not set. */
export function readProvidersFile(env: Env): ProvidersConfig | undefined {
  const file = env[SETTING];
  if (!file) return undefined;
  for (const [name, how] of Object.entries(SHORTHANDS)) {
    if (env[name]) throw new ConfigError(name, `cannot be used together with ${SETTING}, which replaces it: ${how}`);
  }
  const json = readConfigJson(SETTING, file, ProvidersFile);
  const specs = new Map<string, ProviderSpec>();
  const baseDir = path.dirname(path.resolve(file));
  for (const [id, entry] of Object.entries(json.providers)) specs.set(id, providerSpec(env, id, entry, baseDir));
  const routes: Record<string, RouteCandidate[]> = {};
  for (const [model, list] of Object.entries(json.routes ?? {})) routes[model] = routeCandidates(specs, model, list);
  return { providers: [...specs.values()], routes };
}
