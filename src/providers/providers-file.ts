/**
 * `MEDIAGATE_PROVIDERS=path/to/providers.json` (docs/reference/providers/README.md, G90): the
 * providers (channels) of the gateway, media and chat alike, and the route of each model. Read and
 * checked once at start: any mistake (an unknown type or field, a field another type takes, a bad
 * URL, a route to a provider that does not exist or cannot serve that model's family, an unset key
 * variable) is a ConfigError naming it. Keys come from environment variables and are never quoted.
 */
import path from 'node:path';
import { Type, type Static, type TSchema } from '../typebox.js';
import { familyOfModel } from '../contract/model-family.js';
import { ConfigError, type Env } from '../config-error.js';
import { checkConfigJson, readConfigJson } from '../config-file.js';
import type { RouteCandidate } from '../contract/task-request.js';
import type { CreateContext, ReadProvider, RegisteredFactory } from './factory.js';
import { PROVIDER_FACTORIES } from './factories.js';
import type { Provider } from './types.js';

export const SETTING = 'MEDIAGATE_PROVIDERS';

const TYPES = PROVIDER_FACTORIES.map((f) => f.type);
const factoryOf = (type: string): RegisteredFactory => PROVIDER_FACTORIES.find((f) => f.type === type)!;

/** The fields every type takes besides its own (`optionsSchema`). */
const COMMON = {
  concurrency: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000, description: 'a whole number of calls between 1 and 10000' })),
  apiKeyEnv: Type.Optional(Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]*$', description: 'the name of an environment variable holding the key' })),
};

/** What the file's first reading checks of an entry: its `type` names a registered factory, and the common fields (the rest is the type's schema). */
const ProviderEntry = Type.Object(
  {
    type: Type.Union(
      TYPES.map((t) => Type.Literal(t)),
      { description: `one of ${TYPES.join(', ')}` },
    ),
    ...COMMON,
  },
  { additionalProperties: true, description: 'an object { type, baseUrl, apiKeyEnv, ... }' },
);

/** An entry of a type: `type`, the type's own fields, the common ones; nothing else. */
const entrySchema = (f: RegisteredFactory): TSchema =>
  Type.Object(
    { type: Type.Literal(f.type), ...f.optionsSchema.properties, ...COMMON },
    { additionalProperties: false, description: `an object { type: "${f.type}", ... }` },
  );
const ENTRY_SCHEMAS = new Map(PROVIDER_FACTORIES.map((f) => [f.type, entrySchema(f)]));

const Candidate = Type.Object(
  {
    provider: Type.String({ minLength: 1, description: 'the id of one of the providers' }),
    model: Type.Optional(Type.String({ pattern: '^\\S+$', description: "the model's name at that provider (no spaces)" })),
    priority: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 1000, description: 'a whole number 0-1000 (lower is tried first; default: its position in the list)' }),
    ),
    weight: Type.Optional(
      Type.Number({ exclusiveMinimum: 0, maximum: 1_000_000, description: 'a positive number (share of the load among equal priorities; default 1)' }),
    ),
  },
  { additionalProperties: false, description: 'an object { provider, model?, priority?, weight? }' },
);

export const ProvidersFile = Type.Object(
  {
    providers: Type.Record(Type.String(), ProviderEntry, { description: 'an object of provider id -> { type, ... }' }),
    routes: Type.Optional(
      Type.Record(Type.String(), Type.Array(Candidate, { minItems: 1, maxItems: 32, description: 'a list of 1 to 32 candidates' }), {
        description: 'an object of model (or *) -> [candidates]',
      }),
    ),
  },
  { additionalProperties: false, description: 'a JSON object with "providers" and "routes"' },
);

/**
 * One validated provider, as data (its key resolved: never log this object): its id, type, the
 * common fields and its type's options with their defaults.
 */
export type ProviderSpec = { id: string; type: string; apiKey?: string; keySetting?: string; concurrency?: number } & Readonly<Record<string, unknown>>;

/** What `create` needs of the process's configuration. */
export type ProcessDefaults = Pick<CreateContext, 'sandboxTiming' | 'sandboxChatTokensPerSecond'>;

export interface ProvidersConfig {
  providers: ProviderSpec[];
  routes: Record<string, RouteCandidate[]>;
  /** Makes each provider of the file, by its type's factory (which loads its adapter then: G422). */
  create(defaults: ProcessDefaults): Promise<Provider[]>;
}

const ID_RE = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/;

/** A provider of the file: its spec, and its type's reading of it. */
interface FileProvider {
  spec: ProviderSpec;
  factory: RegisteredFactory;
  read: ReadProvider;
}

function readProvider(env: Env, id: string, entry: Static<typeof ProviderEntry>, baseDir: string): FileProvider {
  const where = `providers.${id}`;
  if (!ID_RE.test(id))
    throw new ConfigError(
      SETTING,
      `${where}: provider ids are letters, digits, "_", ".", ":" and "-", starting with a letter or digit, at most 64, got ${JSON.stringify(id)}`,
    );
  const factory = factoryOf(entry.type);
  const own = Object.keys(factory.optionsSchema.properties);
  for (const field of Object.keys(entry)) {
    if (field === 'type' || Object.hasOwn(COMMON, field) || own.includes(field)) continue;
    const takers = PROVIDER_FACTORIES.filter((f) => Object.hasOwn(f.optionsSchema.properties, field)).map((f) => f.type);
    // a field no type takes (a typo) is left to the schema, whose message lists the allowed ones
    if (takers.length > 0)
      throw new ConfigError(
        SETTING,
        `${where}.${field} does not apply to type ${factory.type} (it is a setting of ${takers.join(', ')}; ${factory.type} takes ${own.join(', ')})`,
      );
  }
  checkConfigJson(SETTING, ENTRY_SCHEMAS.get(entry.type)!, entry, `/providers/${id}`);
  const { type, concurrency, apiKeyEnv, ...options } = entry;
  const read = factory.read(options, { setting: SETTING, id, where, at: `/providers/${id}`, baseDir });
  const spec: ProviderSpec = { id, type, ...read.options, ...(concurrency !== undefined && { concurrency }) };
  if (apiKeyEnv !== undefined) {
    const key = env[apiKeyEnv];
    if (!key) throw new ConfigError(apiKeyEnv, `is empty or not set, but ${where}.apiKeyEnv in ${SETTING} names it`);
    Object.assign(spec, { apiKey: key, keySetting: `the environment variable ${apiKeyEnv} (${where}.apiKeyEnv)` });
  }
  return { spec, factory, read };
}

function routeCandidates(providers: Map<string, FileProvider>, model: string, list: Static<typeof Candidate>[]): RouteCandidate[] {
  const where = `routes.${model}`;
  const family = model === '*' ? undefined : familyOfModel(model);
  if (model !== '*' && family === undefined) {
    throw new ConfigError(
      SETTING,
      `${where}: "${model}" is not a model of this interface (a model id of a family's model table, a chat model, or * for every model without a route of its own)`,
    );
  }
  const seen = new Set<string>();
  return list.map((c, i) => {
    const p = providers.get(c.provider);
    if (!p)
      throw new ConfigError(
        SETTING,
        `${where}[${i}].provider must name one of the providers (${[...providers.keys()].join(', ')}), got ${JSON.stringify(c.provider)}`,
      );
    const { type, families } = p.factory;
    if (family !== undefined && !families.includes(family)) {
      throw new ConfigError(
        SETTING,
        `${where}[${i}]: provider "${c.provider}" (type ${type}) cannot serve ${model}, a ${family} model (${type} serves ${families.join(', ')})`,
      );
    }
    p.read.checkRoute({ setting: SETTING, where: `${where}[${i}]`, provider: c.provider, model, ...(c.model !== undefined && { upstreamModel: c.model }) });
    if (seen.has(c.provider)) throw new ConfigError(SETTING, `${where}[${i}]: provider "${c.provider}" is listed twice`);
    seen.add(c.provider);
    return { provider: c.provider, priority: c.priority ?? i, weight: c.weight ?? 1, ...(c.model !== undefined && { model: c.model }) };
  });
}

/** Settings the file replaces, and how to move each into it. */
const SHORTHANDS: Record<string, string> = {
  MEDIAGATE_MODEL_ROUTES: 'write its model=provider pairs as "routes" in the file ("<model>": [{ "provider": "<id>" }])',
  MEDIAGATE_CHAT_CONFIG:
    'describe each of its upstreams in the file as a provider of type openai-chat ({ "type": "openai-chat", "baseUrl": ..., "apiKeyEnv": ... }) and its "models" as routes ("<chat model>": [{ "provider": "<id>", "model": "<upstream model>" }])',
  MEDIAGATE_CHAT_UPSTREAM_URL:
    'describe that upstream in the file as a provider of type openai-chat ({ "type": "openai-chat", "baseUrl": ..., "apiKeyEnv": "<the variable holding its key>" }) and MEDIAGATE_CHAT_UPSTREAM_MODELS as routes',
};

/** The file named by MEDIAGATE_PROVIDERS, validated (keys resolved), or undefined when it is not set. */
export function readProvidersFile(env: Env): ProvidersConfig | undefined {
  const file = env[SETTING];
  if (!file) return undefined;
  for (const [name, how] of Object.entries(SHORTHANDS)) {
    if (env[name]) throw new ConfigError(name, `cannot be used together with ${SETTING}, which replaces it: ${how}`);
  }
  const json = readConfigJson(SETTING, file, ProvidersFile);
  const providers = new Map<string, FileProvider>();
  const baseDir = path.dirname(path.resolve(file));
  for (const [id, entry] of Object.entries(json.providers)) providers.set(id, readProvider(env, id, entry, baseDir));
  const routes: Record<string, RouteCandidate[]> = {};
  for (const [model, list] of Object.entries(json.routes ?? {})) routes[model] = routeCandidates(providers, model, list);
  const all = [...providers.values()];
  return {
    providers: all.map((p) => p.spec),
    routes,
    create: (defaults) =>
      Promise.all(
        all.map(({ spec, read }) => read.create({ ...defaults, id: spec.id, apiKey: spec.apiKey, keySetting: spec.keySetting, concurrency: spec.concurrency })),
      ),
  };
}
