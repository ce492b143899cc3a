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
      templates: { induction: true, minBindings: 3, declaredMinBindings: 2, maxTried: 8 },
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
});
