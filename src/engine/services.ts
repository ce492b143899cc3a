import { configOf, type Config } from "../config";
import { bindShards, type Shard } from "../store/shards/shards";
import { isolate, type IsolateState } from "./isolate";

/**
 * What an isolate builds once from its env and hands to every layer above the store: the parsed vars, the
 * shards they name and this isolate's caches and counters. The HTTP layer sets it on each request (`c.var.services`,
 * src/http/services.ts); the cron builds the same. Each Durable Object parses its own config in its
 * constructor.
 */
export interface Services {
  readonly config: Config;
  /** This isolate's hot answer cache, buffered counters and hit lines (./isolate.ts). */
  readonly isolate: IsolateState;
  /**
   * The shards `D1_SHARDS` names, each with its D1 binding (src/store/shards/shards.ts bindShards), bound on
   * first use. Throws, each time it is read, while a name is not a D1 binding of this Worker: the request
   * that reads it fails open, the next ones try again.
   */
  readonly shards: Shard[];
}

/** The hono variables every request carries: `c.var.services`. */
export interface ServiceVariables {
  services: Services;
}

/** The Worker's hono env: its bindings and the services handed in. */
export type WorkerEnv = { Bindings: Env; Variables: ServiceVariables };

/** Services by env object: built once per isolate (and env), never per request. */
const built = new WeakMap<object, Services>();

/**
 * The services for `env`, built once: its config parsed (a var that breaks its rule is logged once and its
 * default used: src/config.ts) and this isolate's state.
 *
 * @example servicesOf(env).config.lookupTimeoutMs // 1500 unless LOOKUP_TIMEOUT_MS says otherwise
 */
export function servicesOf(env: Env): Services {
  const known = built.get(env);
  if (known) return known;
  const config = configOf(env);
  const services: Services = {
    config,
    // The isolate's one state, for this config (its hot cache follows HOT_CACHE_TTL_MS: ./isolate.ts).
    get isolate() {
      return isolate(config);
    },
    get shards() {
      return bindShards(env, config.shardNames);
    },
  };
  built.set(env, services);
  return services;
}
