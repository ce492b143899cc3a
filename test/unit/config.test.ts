import { afterEach, describe, expect, it, vi } from "vitest";
import { configOf, parseConfig } from "../../src/config";

afterEach(() => {
  vi.restoreAllMocks();
});

describe("parseConfig", () => {
  it("Should give every setting its default when no var is set", () => {
    const { config, invalid } = parseConfig({});
    expect(invalid).toEqual([]);
    expect(config).toMatchObject({
      upstreamBases: {},
      policy: { name: "unanimous", minObservations: 1 },
      hotCacheTtlMs: 5000,
      maxCacheableMessageBytes: 900_000,
      singleFlightWaitMs: 120_000,
      templates: { induction: true, minBindings: 3, declaredMinBindings: 2, maxTried: 32 },
      pruneTtlMs: 0,
      logLevel: "info",
      cacheAnonymous: false,
      analytics: { accountId: "", apiToken: "", dataset: "", sqlUrl: "", timeoutMs: 10_000 },
    });
  });

  it("Should read the vars as set", () => {
    const { config, invalid } = parseConfig({
      SERVE_POLICY: "majority",
      SERVE_MIN_OBSERVATIONS: "2",
      TEMPLATE_INDUCTION: "OFF",
      LOG_LEVEL: " debug ",
      PRUNE_TTL_MS: "2592000000",
      MAX_CACHEABLE_MESSAGE_BYTES: "4096",
      CACHE_ANONYMOUS: "on",
      ANALYTICS_DATASET: " muscle_mem_staging ",
    });
    expect(invalid).toEqual([]);
    expect(config).toMatchObject({
      policy: { name: "majority", minObservations: 2 },
      templates: { induction: false },
      logLevel: "debug",
      pruneTtlMs: 2_592_000_000,
      maxCacheableMessageBytes: 4096,
      cacheAnonymous: true,
      analytics: { dataset: "muscle_mem_staging" },
    });
  });

  it("Should fall back to the default for a var that breaks its rule, and name the var", () => {
    const { config, invalid } = parseConfig({
      SINGLE_FLIGHT_WAIT_MS: "-1",
      HOT_CACHE_TTL_MS: "1s",
      TEMPLATE_MIN_BINDINGS: "17",
      LOG_LEVEL: "loud",
      SERVE_POLICY: "yolo",
    });
    expect(config).toMatchObject({
      singleFlightWaitMs: 120_000,
      hotCacheTtlMs: 5000,
      templates: { minBindings: 3 },
      logLevel: "info",
      policy: { name: "unanimous" },
    });
    expect(invalid.map((v) => v.name)).toEqual(["SERVE_POLICY", "HOT_CACHE_TTL_MS", "SINGLE_FLIGHT_WAIT_MS", "TEMPLATE_MIN_BINDINGS", "LOG_LEVEL"]);
    expect(invalid.find((v) => v.name === "TEMPLATE_MIN_BINDINGS")?.message).toBe("must be a whole number from 2 to 16");
  });
});

describe("the shard vars (D1_SHARDS, D1_SHARD_LOCATIONS)", () => {
  it("Should name DB alone and place no object when neither is set", () => {
    const { config, invalid } = parseConfig({});
    expect(invalid).toEqual([]);
    expect(config.shardNames).toEqual(["DB"]);
    expect([...config.shardLocations]).toEqual([]);
  });

  it("Should read the shards with their ranges and each shard's location hint", () => {
    const { config, invalid } = parseConfig({ D1_SHARDS: "DB, DB_1..DB_3", D1_SHARD_LOCATIONS: "DB=weur,DB_1..DB_3=enam" });
    expect(invalid).toEqual([]);
    expect(config.shardNames).toEqual(["DB", "DB_1", "DB_2", "DB_3"]);
    expect(Object.fromEntries(config.shardLocations)).toEqual({ DB: "weur", DB_1: "enam", DB_2: "enam", DB_3: "enam" });
  });

  it("Should leave a malformed D1_SHARDS item out, keep the others, and name each item left out", () => {
    const { config, invalid } = parseConfig({ D1_SHARDS: "DB,DB_1,db-2,DB_5..DB_3" });
    expect(config.shardNames).toEqual(["DB", "DB_1"]);
    expect(invalid).toEqual([
      { name: "D1_SHARDS", message: "names 'db-2', which is not a binding name or a range FIRST..LAST", instead: "it is left out" },
      { name: "D1_SHARDS", message: "names 'DB_5..DB_3', which is not a binding name or a range FIRST..LAST", instead: "it is left out" },
    ]);
    expect(parseConfig({ D1_SHARDS: "nope" }).config.shardNames).toEqual(["DB"]);
  });

  it("Should place objects without hints when D1_SHARD_LOCATIONS is invalid, and say why", () => {
    const { config, invalid } = parseConfig({ D1_SHARD_LOCATIONS: "DB=weur,DB_1=europe" });
    expect([...config.shardLocations]).toEqual([]);
    expect(invalid).toEqual([{ name: "D1_SHARD_LOCATIONS", message: expect.stringContaining("'europe' is not a location hint") }]);
  });
});

describe("configOf", () => {
  it("Should parse an env once and log each bad var once, by name", () => {
    const lines: string[] = [];
    vi.spyOn(console, "error").mockImplementation((text: unknown) => void lines.push(String(text)));
    const env = { LOOKUP_TIMEOUT_MS: "0" } as unknown as Env;
    const first = configOf(env);
    expect(configOf(env)).toBe(first);
    expect(first.lookupTimeoutMs).toBe(1500);
    expect(lines.map((l) => JSON.parse(l) as Record<string, unknown>)).toEqual([
      { event: "config_invalid", level: "error", var: "LOOKUP_TIMEOUT_MS", error: "LOOKUP_TIMEOUT_MS must be a whole number, at least 1; its default is used" },
    ]);
  });

  it("Should log a D1_SHARDS item left out as left out, not as a default used", () => {
    const lines: string[] = [];
    vi.spyOn(console, "error").mockImplementation((text: unknown) => void lines.push(String(text)));
    expect(configOf({ D1_SHARDS: "DB,DB 1" } as unknown as Env).shardNames).toEqual(["DB"]);
    expect(lines.map((l) => JSON.parse(l) as Record<string, unknown>)).toEqual([
      {
        event: "config_invalid",
        level: "error",
        var: "D1_SHARDS",
        error: "D1_SHARDS names 'DB 1', which is not a binding name or a range FIRST..LAST; it is left out",
      },
    ]);
  });
});
