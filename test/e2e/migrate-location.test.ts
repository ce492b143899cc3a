import { describe, expect, it, vi } from "vitest";
import { createArgs } from "../../scripts/migrate";

describe("scripts/migrate.ts creates each shard where D1_SHARD_LOCATIONS puts it", () => {
  it("Should pass --location for a shard in a range, and none for a shard without a hint", () => {
    const locations = "DB=weur,DB_1..DB_4=enam";
    expect(createArgs("mm-prod", "DB", locations)).toEqual(["d1", "create", "mm-prod", "--location", "weur"]);
    expect(createArgs("mm-prod-3", "DB_3", locations)).toEqual(["d1", "create", "mm-prod-3", "--location", "enam"]);
    expect(createArgs("mm-prod-9", "DB_9", locations)).toEqual(["d1", "create", "mm-prod-9"]);
    expect(createArgs("mm-prod", "DB", undefined)).toEqual(["d1", "create", "mm-prod"]);
  });

  it("Should create without --location, and say why, for a hint D1 cannot take or an invalid var", () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => undefined);
    expect(createArgs("mm-prod", "DB", "DB=sam")).toEqual(["d1", "create", "mm-prod"]);
    expect(createArgs("mm-prod", "DB", "DB=europe")).toEqual(["d1", "create", "mm-prod"]);
    expect(warn.mock.calls.map((c) => String(c[0]))).toEqual([
      expect.stringContaining("no 'sam' location"),
      expect.stringContaining("'europe' is not a location hint"),
    ]);
    warn.mockRestore();
  });
});
