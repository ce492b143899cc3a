import { parsePolicy, type ServePolicy } from "./cache/policy";

/** The Worker's settings, parsed once per isolate from its vars with safe defaults. */
export interface Config {
  upstreamBaseUrl: string;
  /** The Anthropic upstream for `/v1/messages` (`ANTHROPIC_BASE_URL`). */
  anthropicBaseUrl: string;
  /** The Gemini upstream for `/v1beta/models/{model}:generateContent` (`GEMINI_BASE_URL`). */
  geminiBaseUrl: string;
  policy: ServePolicy;
  hotCacheTtlMs: number;
  /** How long the per-colo layer (Cache API) serves an answer set read from D1 (`COLO_CACHE_TTL_MS`; 0 turns it off). */
  coloCacheTtlMs: number;
  maxBodyBytes: number;
  lookupTimeoutMs: number;
  /** How long a follower of single flight waits for its leader's answer (`SINGLE_FLIGHT_WAIT_MS`). */
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
}

function int(value: string | undefined, fallback: number, min = 0): number {
  const n = Number.parseInt(value ?? "", 10);
  return Number.isFinite(n) && n >= min ? n : fallback;
}

let cached: { env: Env; config: Config } | undefined;

export function configOf(env: Env): Config {
  if (cached?.env === env) return cached.config;
  const vars = env as unknown as Record<string, string | undefined>;
  const config: Config = {
    upstreamBaseUrl: vars.UPSTREAM_BASE_URL || "https://api.openai.com/v1",
    anthropicBaseUrl: vars.ANTHROPIC_BASE_URL || "https://api.anthropic.com/v1",
    geminiBaseUrl: vars.GEMINI_BASE_URL || "https://generativelanguage.googleapis.com",
    policy: parsePolicy(vars.SERVE_POLICY, vars.SERVE_MIN_OBSERVATIONS),
    hotCacheTtlMs: int(vars.HOT_CACHE_TTL_MS, 1000),
    coloCacheTtlMs: int(vars.COLO_CACHE_TTL_MS, 5000),
    maxBodyBytes: int(vars.MAX_BODY_BYTES, 32 * 1024 * 1024, 1),
    lookupTimeoutMs: int(vars.LOOKUP_TIMEOUT_MS, 1500, 1),
    singleFlightWaitMs: int(vars.SINGLE_FLIGHT_WAIT_MS, 120_000, 1),
    upstreamTimeoutMs: int(vars.UPSTREAM_TIMEOUT_MS, 600_000),
    counterFlushMs: int(vars.COUNTER_FLUSH_MS, 1000),
    tallyFlushMs: int(vars.TALLY_FLUSH_MS, 60_000),
    readReplication: vars.D1_READ_REPLICATION === "on",
    cacheAnonymous: vars.CACHE_ANONYMOUS === "on",
  };
  cached = { env, config };
  return config;
}
