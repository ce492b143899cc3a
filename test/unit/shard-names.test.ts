import { describe, expect, it } from "vitest";
import { MAX_RANGE, shardNames } from "../../src/store/shards/shards";

describe("D1_SHARDS", () => {
  it("Should expand a numbered range, so that hundreds of shards fit in a few bytes", () => {
    expect(shardNames("DB,DB_1..DB_3")).toEqual(["DB", "DB_1", "DB_2", "DB_3"]);
    const many = shardNames("DB,DB_1..DB_800");
    expect(many).toHaveLength(801);
    expect(many.at(-1)).toBe("DB_800");
    expect("DB,DB_1..DB_800".length).toBeLessThan(20);
  });

  it("Should ignore a range it cannot trust: other prefixes, backwards, too long", () => {
    expect(shardNames("DB,DB_1..SHARD_3")).toEqual(["DB"]);
    expect(shardNames("DB,DB_5..DB_2")).toEqual(["DB"]);
    expect(shardNames(`DB,DB_1..DB_${MAX_RANGE + 1}`)).toEqual(["DB"]);
    expect(shardNames("DB_2..DB_3,DB_3,DB")).toEqual(["DB_2", "DB_3", "DB"]);
  });
});
