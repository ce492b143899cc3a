import { describe, expect, it } from "vitest";
import { configOf } from "../../src/config";
import { servicesOf } from "../../src/engine/services";

describe("servicesOf (src/engine/services.ts)", () => {
  it("Should build an env's services once: the same object, its config the one parsed for that env", () => {
    const env = { LOOKUP_TIMEOUT_MS: "250" } as unknown as Env;
    const services = servicesOf(env);
    expect(servicesOf(env)).toBe(services);
    expect(services.config).toBe(configOf(env));
    expect(services.config.lookupTimeoutMs).toBe(250);
  });

  it("Should give another env its own config, and every env the isolate's one state", () => {
    const a = servicesOf({ HOT_CACHE_TTL_MS: "5000" } as unknown as Env);
    const b = servicesOf({ HOT_CACHE_TTL_MS: "5000", LOOKUP_TIMEOUT_MS: "9" } as unknown as Env);
    // Compared by identity only: a deep comparison would read the lazy `shards` getter, which throws without a DB binding.
    expect(b === a).toBe(false);
    expect(b.config.lookupTimeoutMs).toBe(9);
    expect(a.config.lookupTimeoutMs).toBe(1500);
    expect(b.isolate).toBe(a.isolate);
    expect(b.isolate.hot).toBe(a.isolate.hot);
  });
});
