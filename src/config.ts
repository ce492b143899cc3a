import { z } from "zod";
import { DEFAULT_MAX_CACHEABLE_MESSAGE_BYTES } from "./core/limits";
import type { ServePolicy } from "./cache/policy";
import { DEFAULT_DECLARED_MIN_BINDINGS, DEFAULT_MIN_BINDINGS, type TemplateSettings } from "./cache/templates/settings";
import type { LogLevel } from "./observability/log";
import { logEvent } from "./observability/log-event";
import { pricesOf, type PriceTable } from "./core/prices";
import { oneOf, tenantList, text, wholeNumber, type TenantList } from "./core/var-rules";
import { parseShardLocations, readShardNames, type LocationHint, type ShardNames } from "./core/shard-vars";

/**
 * The upstream URL vars (`*_BASE_URL`) as set, blank ones left out: each provider's registry entry declares
 * its var and default and reads it (src/providers/upstream.ts). Never replaced by the default when
 * malformed: a typo must fail at the upstream (502 naming the var), not send the caller's key to another provider.
 */
function upstreamBasesOf(env: Readonly<Record<string, unknown>>): Readonly<Record<string, string>> {
  return Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[0].endsWith("_BASE_URL") && typeof e[1] === "string" && e[1] !== ""));
}

/** `PRICES_JSON` merged over the built-in table; a malformed one is logged (`prices_json_invalid`) and ignored. */
const prices = z
  .string()
  .optional()
  .transform((json) => pricesOf(json, (error) => logEvent("error", "prices_json_invalid", { error })));

const DAY_MS = 86_400_000;

/** `D1_SHARD_LOCATIONS`: each shard's location hint (src/core/shard-vars.ts); an invalid value places objects without hints. */
function locationHints(value: string | undefined, ctx: z.RefinementCtx): ReadonlyMap<string, LocationHint> {
  const parsed = parseShardLocations(value);
  if (!parsed.ok) ctx.addIssue({ code: "custom", message: parsed.message });
  return parsed.ok ? parsed.hints : z.NEVER;
}

/** The Worker's vars, each with its rule and default (docs/configuration.md). */
export const varsSchema = z.object({
  SERVE_POLICY: oneOf(["unanimous", "majority"], "unanimous"),
  SERVE_MIN_OBSERVATIONS: wholeNumber(1, 1),
  HOT_CACHE_TTL_MS: wholeNumber(5000),
  COLO_CACHE_TTL_MS: wholeNumber(5000),
  MAX_BODY_BYTES: wholeNumber(32 * 1024 * 1024, 1),
  MAX_CACHEABLE_MESSAGE_BYTES: wholeNumber(DEFAULT_MAX_CACHEABLE_MESSAGE_BYTES, 1),
  LOOKUP_TIMEOUT_MS: wholeNumber(1500, 1),
  DIRECTORY_TIMEOUT_MS: wholeNumber(500, 1),
  SINGLE_FLIGHT_WAIT_MS: wholeNumber(120_000, 1),
  UPSTREAM_TIMEOUT_MS: wholeNumber(600_000),
  COUNTER_FLUSH_MS: wholeNumber(1000),
  TALLY_FLUSH_MS: wholeNumber(60_000),
  CACHE_ANONYMOUS: oneOf(["on", "off"], "off"),
  D1_READ_REPLICATION: oneOf(["on", "off"], "off"),
  TEMPLATE_INDUCTION: oneOf(["on", "off"], "on"),
  TEMPLATE_MIN_BINDINGS: wholeNumber(DEFAULT_MIN_BINDINGS, 2, 16),
  DECLARED_MIN_BINDINGS: wholeNumber(DEFAULT_DECLARED_MIN_BINDINGS, 2, 16),
  /** Unset or 0: the cron prunes nothing (wrangler.toml sets 30 days). */
  PRUNE_TTL_MS: wholeNumber(0),
  LOG_LEVEL: oneOf<LogLevel>(["debug", "info", "warn", "error", "off"], "info"),
  PRICES_JSON: prices,
  // The traffic series' source: checked by src/http/api/series.ts, which answers 501 naming what is missing.
  ANALYTICS_ACCOUNT_ID: text,
  ANALYTICS_API_TOKEN: text,
  ANALYTICS_DATASET: text,
  ANALYTICS_SQL_URL: text,
  ANALYTICS_TIMEOUT_MS: wholeNumber(10_000, 1),
  /** Who may use the Worker (docs/configuration.md, docs/deploy.md "Who may use the Worker"): a Worker credential, an allow-list, import grants. */
  WORKER_TOKEN: text,
  ALLOWED_TENANTS: tenantList,
  IMPORT_TENANTS: tenantList,
  KEY_FRESH_MS: wholeNumber(900_000),
  KEY_CHECK_TIMEOUT_MS: wholeNumber(2_000, 1),
  /** A malformed item is left out, not the whole var (parseConfig lists it): the other shards keep their trees' hits. */
  D1_SHARDS: z.string().optional().transform(readShardNames),
  D1_SHARD_LOCATIONS: z.string().optional().transform(locationHints),
});

type Vars = z.output<typeof varsSchema>;

/** The Worker's settings, parsed once per isolate from its vars. */
export interface Config {
  /** Every `*_BASE_URL` var as set (blank ones left out), read through the var a provider declares (src/providers/upstream.ts). */
  upstreamBases: Readonly<Record<string, string>>;
  policy: ServePolicy;
  hotCacheTtlMs: number;
  /** How long the per-colo layer (Cache API) serves an answer set read from D1 (`COLO_CACHE_TTL_MS`; 0 turns it off). */
  coloCacheTtlMs: number;
  maxBodyBytes: number;
  /** The largest message or frame the cache stores (`MAX_CACHEABLE_MESSAGE_BYTES`): a larger one is a bypass. */
  maxCacheableMessageBytes: number;
  lookupTimeoutMs: number;
  /** How long a request waits for the tree directory before it reads the tree's last known shard, or fails open (`DIRECTORY_TIMEOUT_MS`, at least 1). */
  directoryTimeoutMs: number;
  /** How long a follower of single flight waits for its leader's answer (`SINGLE_FLIGHT_WAIT_MS`, at least 1). */
  singleFlightWaitMs: number;
  /** How long the upstream may take to send its status and headers (`UPSTREAM_TIMEOUT_MS`; 0 waits forever). */
  upstreamTimeoutMs: number;
  counterFlushMs: number;
  /** How often a tree's HitTally object writes its gathered hit counts to D1 (`TALLY_FLUSH_MS`; 0 writes each batch at once). */
  tallyFlushMs: number;
  /** `CACHE_ANONYMOUS=on`: cache requests that carry no credential, in a tenant of their own (default: pass them through). */
  cacheAnonymous: boolean;
  /** `D1_READ_REPLICATION=on`: hits read through D1 sessions (replicas), misses are confirmed on the primary. */
  readReplication: boolean;
  /** `TEMPLATE_INDUCTION`, `TEMPLATE_MIN_BINDINGS`, `DECLARED_MIN_BINDINGS`. */
  templates: TemplateSettings;
  /** The cron's stale prune (`PRUNE_TTL_MS`; 0 prunes nothing). */
  pruneTtlMs: number;
  logLevel: LogLevel;
  /** The built-in prices merged with `PRICES_JSON`. */
  prices: PriceTable;
  /** `ANALYTICS_*` as set (blank when unset); src/http/api/series.ts checks them. */
  analytics: { accountId: string; apiToken: string; dataset: string; sqlUrl: string; timeoutMs: number };
  access: AccessSettings;
  /** `D1_SHARDS`: the D1 bindings that hold trees (default `DB`), bound once per isolate as `Services.shards`. */
  shardNames: readonly string[];
  /** `D1_SHARD_LOCATIONS`: where each shard's primary is, so that its trees' objects are created next to it (none when unset or invalid). */
  shardLocations: ReadonlyMap<string, LocationHint>;
}

/** Who may use the Worker and for how long a credential's hits stay served (docs/configuration.md, docs/deploy.md "Who may use the Worker"). */
export interface AccessSettings {
  /** `WORKER_TOKEN`: when set, every model and API request but the admin's sends `muscle-mem-authorization: Bearer <it>`. */
  workerToken: string;
  /** `ALLOWED_TENANTS`: the tenants whose credentials may use the Worker (`*`, the default when unset: any). */
  allowedTenants: TenantList;
  /** `IMPORT_TENANTS`: the tenants whose own keys may `POST /api/import` (default none: only the admin token). */
  importTenants: TenantList;
  /** `KEY_FRESH_MS`: a credential is served hits only while its provider accepted it this recently (0: always, unsafe). */
  keyFreshMs: number;
  /** `KEY_CHECK_TIMEOUT_MS`: how long the cheap upstream check of a stale credential may take. */
  keyCheckTimeoutMs: number;
}

/** A var that did not parse: its name and what it must be. Its default is used, or what `instead` says. */
export interface InvalidVar {
  name: string;
  message: string;
  instead?: string;
}

/**
 * Parses the vars. A var that breaks its rule falls back to its default
 * (a bad setting never fails every request) and is listed in `invalid`. Pure.
 *
 * @example parseConfig({ HOT_CACHE_TTL_MS: "x" }).invalid // [{ name: "HOT_CACHE_TTL_MS", message: "must be a whole number, at least 0" }]
 */
export function parseConfig(env: Readonly<Record<string, unknown>>): { config: Config; invalid: InvalidVar[] } {
  const invalid: InvalidVar[] = [];
  const raw: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(varsSchema.shape)) {
    const value = typeof env[name] === "string" ? env[name] : undefined;
    const parsed = schema.safeParse(value);
    if (parsed.success) raw[name] = parsed.data;
    else {
      invalid.push({ name, message: parsed.error.issues[0]?.message ?? "is invalid" });
      raw[name] = schema.parse(undefined);
    }
  }
  // SAFETY: D1_SHARDS' schema reads any string (readShardNames).
  for (const item of (raw.D1_SHARDS as ShardNames).dropped)
    invalid.push({ name: "D1_SHARDS", message: `names '${item.slice(0, 80)}', which is not a binding name or a range FIRST..LAST`, instead: "it is left out" });
  // SAFETY: every key of the schema's shape was parsed above with its own schema.
  return { config: { ...configFrom(raw as Vars), upstreamBases: upstreamBasesOf(env) }, invalid };
}

function configFrom(v: Vars): Omit<Config, "upstreamBases"> {
  return {
    policy: { name: v.SERVE_POLICY, minObservations: v.SERVE_MIN_OBSERVATIONS },
    hotCacheTtlMs: v.HOT_CACHE_TTL_MS,
    coloCacheTtlMs: v.COLO_CACHE_TTL_MS,
    maxBodyBytes: v.MAX_BODY_BYTES,
    maxCacheableMessageBytes: v.MAX_CACHEABLE_MESSAGE_BYTES,
    lookupTimeoutMs: v.LOOKUP_TIMEOUT_MS,
    directoryTimeoutMs: v.DIRECTORY_TIMEOUT_MS,
    singleFlightWaitMs: v.SINGLE_FLIGHT_WAIT_MS,
    upstreamTimeoutMs: v.UPSTREAM_TIMEOUT_MS,
    counterFlushMs: v.COUNTER_FLUSH_MS,
    tallyFlushMs: v.TALLY_FLUSH_MS,
    cacheAnonymous: v.CACHE_ANONYMOUS === "on",
    readReplication: v.D1_READ_REPLICATION === "on",
    templates: { induction: v.TEMPLATE_INDUCTION !== "off", minBindings: v.TEMPLATE_MIN_BINDINGS, declaredMinBindings: v.DECLARED_MIN_BINDINGS, maxTried: 32 },
    pruneTtlMs: v.PRUNE_TTL_MS,
    logLevel: v.LOG_LEVEL,
    prices: v.PRICES_JSON,
    analytics: {
      accountId: v.ANALYTICS_ACCOUNT_ID,
      apiToken: v.ANALYTICS_API_TOKEN,
      dataset: v.ANALYTICS_DATASET,
      sqlUrl: v.ANALYTICS_SQL_URL,
      timeoutMs: v.ANALYTICS_TIMEOUT_MS,
    },
    access: {
      workerToken: v.WORKER_TOKEN,
      allowedTenants: v.ALLOWED_TENANTS instanceof Set && v.ALLOWED_TENANTS.size === 0 ? "*" : v.ALLOWED_TENANTS,
      importTenants: v.IMPORT_TENANTS,
      keyFreshMs: v.KEY_FRESH_MS,
      keyCheckTimeoutMs: v.KEY_CHECK_TIMEOUT_MS,
    },
    shardNames: v.D1_SHARDS.names,
    shardLocations: v.D1_SHARD_LOCATIONS,
  };
}

/** Parsed configs by env object: the vars are read once per isolate (and env), never per request. */
const parsed = new WeakMap<object, Config>();

/**
 * The Worker's settings for `env`, parsed once. A var that breaks its rule is
 * logged once (`config_invalid`, naming it) and its default is used.
 *
 * @example configOf(env).lookupTimeoutMs // 1500 unless LOOKUP_TIMEOUT_MS says otherwise
 */
export function configOf(env: Env): Config {
  const known = parsed.get(env);
  if (known) return known;
  const { config, invalid } = parseConfig(env as unknown as Record<string, unknown>);
  for (const bad of invalid)
    logEvent("error", "config_invalid", { var: bad.name, error: `${bad.name} ${bad.message}; ${bad.instead ?? "its default is used"}` });
  parsed.set(env, config);
  return config;
}

/**
 * The template vars alone (`TEMPLATE_*`, `DECLARED_MIN_BINDINGS`), by the same rules.
 *
 * @example templateSettings({ TEMPLATE_MIN_BINDINGS: "5" }).minBindings // => 5
 */
export function templateSettings(vars: Readonly<Record<string, unknown>>): TemplateSettings {
  return parseConfig(vars).config.templates;
}

/**
 * The serving policy alone (`SERVE_POLICY`, `SERVE_MIN_OBSERVATIONS`), by the same rules.
 *
 * @example parsePolicy("majority", "2") // { name: "majority", minObservations: 2 }
 */
export function parsePolicy(name: string | undefined, minObservations: string | undefined): ServePolicy {
  return parseConfig({ SERVE_POLICY: name, SERVE_MIN_OBSERVATIONS: minObservations }).config.policy;
}
