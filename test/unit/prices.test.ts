import { afterEach, describe, expect, it, vi } from "vitest";
import { DEFAULT_PRICES, pricesOf } from "../../src/core/prices";
import { parseConfig } from "../../src/config";

afterEach(() => {
  vi.restoreAllMocks();
});

describe("the price table (src/core/prices.ts)", () => {
  it("Should merge PRICES_JSON over the built-in table and report nothing when it parses", () => {
    const invalid: string[] = [];
    const table = pricesOf('{"grok-3":{"prompt":3,"completion":15},"gpt-4o":{"prompt":1,"completion":2}}', (error) => invalid.push(error));
    expect(table["grok-3"]).toEqual({ prompt: 3, completion: 15 });
    expect(table["gpt-4o"]).toEqual({ prompt: 1, completion: 2 });
    expect(table["gpt-4.1"]).toEqual(DEFAULT_PRICES["gpt-4.1"]);
    expect(pricesOf(undefined, (error) => invalid.push(error))).toBe(DEFAULT_PRICES);
    expect(invalid).toEqual([]);
  });

  it("Should ignore a malformed PRICES_JSON (not JSON, or a negative price) and hand what was wrong to onInvalid, once each", () => {
    const invalid: string[] = [];
    expect(pricesOf("not json", (error) => invalid.push(error))).toBe(DEFAULT_PRICES);
    expect(pricesOf('{"m":{"prompt":-1,"completion":2}}', (error) => invalid.push(error))).toBe(DEFAULT_PRICES);
    expect(invalid).toHaveLength(2);
    expect(invalid[0]).toMatch(/SyntaxError/);
  });

  it("Should log a malformed PRICES_JSON as prices_json_invalid when the config is parsed, and price with the built-in table", () => {
    const lines: Record<string, unknown>[] = [];
    vi.spyOn(console, "error").mockImplementation((text: unknown) => void lines.push(JSON.parse(String(text)) as Record<string, unknown>));
    const { config, invalid } = parseConfig({ PRICES_JSON: "{" });
    expect(config.prices).toBe(DEFAULT_PRICES);
    expect(invalid).toEqual([]);
    expect(lines.map((l) => [l.event, l.level])).toEqual([["prices_json_invalid", "error"]]);
  });
});
