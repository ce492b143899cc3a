import { describe, expect, it } from "vitest";
import { parseShardLocations } from "../../src/store/shards/locations";

describe("D1_SHARD_LOCATIONS", () => {
  it("Should read one location hint per shard binding", () => {
    const parsed = parseShardLocations(" DB=weur, DB_1 = enam ");
    expect(parsed.ok && [...parsed.hints]).toEqual([
      ["DB", "weur"],
      ["DB_1", "enam"],
    ]);
  });

  it("Should read unset or empty as no hints", () => {
    for (const value of [undefined, "", " , "]) {
      const parsed = parseShardLocations(value);
      expect(parsed.ok && parsed.hints.size).toBe(0);
    }
  });

  it("Should reject an unknown hint, a pair without '=', and a binding named twice, naming the problem", () => {
    expect(parseShardLocations("DB=europe")).toEqual({ ok: false, message: expect.stringContaining("'europe' is not a location hint") });
    expect(parseShardLocations("DB")).toEqual({ ok: false, message: expect.stringContaining("'DB' is not BINDING=hint") });
    expect(parseShardLocations("DB=weur,DB=enam")).toEqual({ ok: false, message: expect.stringContaining("names DB twice") });
  });
});

describe("D1_SHARD_LOCATIONS ranges", () => {
  it("Should give every binding of a range its hint, as D1_SHARDS names ranges", () => {
    const parsed = parseShardLocations("DB=weur, DB_1..DB_3=weur, DB_4..DB_5 = enam");
    expect(parsed.ok && Object.fromEntries(parsed.hints)).toEqual({ DB: "weur", DB_1: "weur", DB_2: "weur", DB_3: "weur", DB_4: "enam", DB_5: "enam" });
  });

  it("Should reject a range that overlaps another pair, and a backwards or mixed-prefix range", () => {
    expect(parseShardLocations("DB_1..DB_3=weur,DB_2=enam")).toEqual({ ok: false, message: expect.stringContaining("names DB_2 twice") });
    expect(parseShardLocations("DB_3..DB_1=weur")).toEqual({ ok: false, message: expect.stringContaining("is not BINDING=hint") });
    expect(parseShardLocations("DB_1..X_3=weur")).toEqual({ ok: false, message: expect.stringContaining("is not BINDING=hint") });
  });
});
