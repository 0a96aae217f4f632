/**
 * How a provider type joins the gateway (G403): one factory per type, `{ type, families,
 * optionsSchema, resolve, checkRoute?, create }`, listed once in factories.ts. providers.json is
 * checked against each type's `optionsSchema` (plus the fields every type takes: `type`,
 * `concurrency`, `apiKeyEnv`), the type's `resolve` fills its defaults and checks what a schema cannot
 * (URLs, model mappings, workflow files), `checkRoute` what a route to it must name, and `create`
 * makes the provider (importing the adapter only then: G422). Nothing else names the types: adding
 * one is a folder and a line in the list.
 */
import type { Static, TObject } from '../typebox.js';
import { checkConfigJson } from '../config-file.js';
import type { SandboxTiming } from './sandbox/timing.js';
import type { Provider, ServiceFamily } from './types.js';

/** Where a provider's entry is being read (`fail` throws the ConfigError of the providers file). */
export interface ReadContext {
  /** The setting naming the file (MEDIAGATE_PROVIDERS). */
  setting: string;
  id: string;
  /** `providers.<id>`: how messages name the entry. */
  where: string;
  /** The entry as a JSON pointer (`/providers/<id>`), for schema messages of nested parts. */
  at: string;
  /** The folder of providers.json (files it names are relative to it). */
  baseDir: string;
}

/** One candidate of a route to a provider of this type, as the file gives it. */
export interface RouteContext {
  setting: string;
  /** `routes.<model>[<i>]`: how messages name the candidate. */
  where: string;
  /** The provider's id. */
  provider: string;
  /** The route's model (`*`: every model without a route of its own). */
  model: string;
  /** The candidate's `model`: the name at the provider, when it differs. */
  upstreamModel?: string;
}

/** What `create` gets besides the type's options: what every type takes, and the process's defaults. */
export interface CreateContext {
  id: string;
  /** The key named by `apiKeyEnv`, resolved. */
  apiKey?: string;
  /** Where the key comes from, for operator messages (never the key). */
  keySetting?: string;
  /** Calls in flight at once (`concurrency`). */
  concurrency?: number;
  /** The process's sandbox timing and chat speed (a sandbox entry may set its own). */
  sandboxTiming: SandboxTiming;
  sandboxChatTokensPerSecond: number;
}

export interface ProviderFactory<S extends TObject, O extends object> {
  /** The providers.json `type`. */
  type: string;
  /** What providers of this type serve (routes to them are checked against it). */
  families: readonly ServiceFamily[];
  /** The type's own fields (additionalProperties false; `type`, `concurrency` and `apiKeyEnv` are added for every type). */
  optionsSchema: S;
  /** The options with defaults filled and checked beyond the schema; throws a ConfigError naming the field. */
  resolve(options: Static<S>, ctx: ReadContext): O;
  /** Throws a ConfigError when a route's candidate names what this provider cannot serve (a model it has no mapping of). */
  checkRoute?(options: O, route: RouteContext): void;
  /**
   * Makes the provider. An adapter's code is imported here, on first use (`await import('./provider.js')`),
   * so a process loads only the adapters of the types its providers.json names (G422).
   */
  create(options: O, ctx: CreateContext): Provider | Promise<Provider>;
}

/** An entry of providers.json read by its type's factory: its options (resolved), bound to the checks and the maker of its type. */
export interface ReadProvider {
  options: object;
  checkRoute(route: RouteContext): void;
  create(ctx: CreateContext): Promise<Provider>;
}

/** A factory as the list holds it: its options type closed over, so the list needs no union of types and no casts. */
export interface RegisteredFactory {
  type: string;
  families: readonly ServiceFamily[];
  optionsSchema: TObject;
  /** `options`: the entry without the fields every type takes. */
  read(options: Record<string, unknown>, ctx: ReadContext): ReadProvider;
}

export function registerFactory<S extends TObject, O extends object>(factory: ProviderFactory<S, O>): RegisteredFactory {
  return {
    type: factory.type,
    families: factory.families,
    optionsSchema: factory.optionsSchema,
    read(raw, ctx) {
      const options = factory.resolve(checkConfigJson(ctx.setting, factory.optionsSchema, raw, ctx.at), ctx);
      return {
        options,
        checkRoute: (route) => factory.checkRoute?.(options, route),
        create: async (createCtx) => factory.create(options, createCtx),
      };
    },
  };
}
