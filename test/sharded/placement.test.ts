import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { resolveHome } from "../../src/store/shards/directory";
import { forgetPlacementCounts } from "../../src/store/shards/placement";
import { shardOf } from "../../src/store/shards/shards";
import { dbNamed, NAMES } from "./shard-helpers";

/**
 * New-tree placement reads the trees per shard from `shard_trees` (one row per shard), which triggers on
 * `tree_directory` keep equal to the directory's own rows: no statement on the placing path scans the directory.
 */

function hex(n: number): string {
  return `ab${n.toString(16).padStart(30, "0")}`;
}

/** Trees per shard two ways: the counts the triggers keep, and a count of the directory's rows. */
async function bothCounts(): Promise<{ kept: Record<string, number>; counted: Record<string, number> }> {
  const dir = dbNamed("DB");
  const kept = await dir.prepare("SELECT shard, trees FROM shard_trees").all<{ shard: string; trees: number }>();
  const counted = await dir.prepare("SELECT shard, count(*) AS trees FROM tree_directory GROUP BY shard").all<{ shard: string; trees: number }>();
  const byShard = (rows: { shard: string; trees: number }[]) => Object.fromEntries(rows.filter((r) => r.trees !== 0).map((r) => [r.shard, r.trees]));
  return { kept: byShard(kept.results), counted: byShard(counted.results) };
}

/** The SQL every statement prepared on the directory's database runs, while `work` runs. */
async function statementsDuring(work: () => Promise<unknown>): Promise<string[]> {
  const seen: string[] = [];
  const real = env.DB.prepare.bind(env.DB);
  const spy = vi.spyOn(env.DB, "prepare").mockImplementation((sql: string) => {
    seen.push(sql);
    return real(sql);
  });
  try {
    await work();
  } finally {
    spy.mockRestore();
  }
  return seen;
}

afterEach(() => {
  forgetPlacementCounts();
});

describe("new-tree placement without a directory scan", () => {
  it("Should keep shard_trees equal to the directory through inserts, a batch insert, a move's switch and deletes", async () => {
    const dir = dbNamed("DB");
    const insert = dir.prepare("INSERT OR IGNORE INTO tree_directory (tree_id, tenant, namespace, shard, created_at) VALUES (?1, 't', 'n', ?2, 1)");
    await dir.batch(NAMES.flatMap((name, i) => [insert.bind(hex(10 + i), name), insert.bind(hex(20 + i), name)]));
    // An ignored duplicate counts nothing.
    await insert.bind(hex(10), "DB_3").run();
    await dir
      .prepare("INSERT INTO tree_directory (tree_id, tenant, namespace, shard, created_at) VALUES (?1, 't', 'n', 'DB_1', 1), (?2, 't', 'n', 'DB_1', 1)")
      .bind(hex(30), hex(31))
      .run();
    let counts = await bothCounts();
    expect(counts.kept).toEqual(counts.counted);
    expect(counts.kept.DB_1).toBeGreaterThanOrEqual(4);
    await dir.prepare("UPDATE tree_directory SET shard = 'DB_2', draining_from = 'DB_1' WHERE tree_id = ?1").bind(hex(30)).run();
    // A move's other updates (moving_to, draining_from) leave the counts alone.
    await dir.prepare("UPDATE tree_directory SET draining_from = NULL, moving_to = 'DB_3' WHERE tree_id = ?1").bind(hex(30)).run();
    counts = await bothCounts();
    expect(counts.kept).toEqual(counts.counted);
    await dir.prepare("DELETE FROM tree_directory WHERE tree_id IN (?1, ?2, ?3)").bind(hex(30), hex(31), hex(10)).run();
    counts = await bothCounts();
    expect(counts.kept).toEqual(counts.counted);
  });

  it("Should place a new tree on the shard with the fewest trees by the kept counts, reading shard_trees and never tree_directory as a whole", async () => {
    const dir = dbNamed("DB");
    const before = await dir.prepare("SELECT shard, trees FROM shard_trees").all<{ shard: string; trees: number }>();
    // Every shard but DB_2 far fuller (the counts alone: the placement must go by them).
    await dir.batch(
      NAMES.map((name) =>
        dir
          .prepare("INSERT INTO shard_trees (shard, trees) VALUES (?1, ?2) ON CONFLICT (shard) DO UPDATE SET trees = ?2")
          .bind(name, name === "DB_2" ? 0 : 1_000_000),
      ),
    );
    try {
      // A tree the hash rule alone would put elsewhere.
      const id = hex([500, 501, 502, 503, 504, 505, 506, 507].find((n) => shardOf(NAMES, hex(n)) !== "DB_2") ?? 500);
      const sql = await statementsDuring(() => resolveHome(env, id, { tenant: "t", namespace: "placed" }));
      expect((await resolveHome(env, id, null))?.shard).toBe("DB_2");
      expect(sql.some((s) => s.includes("FROM shard_trees"))).toBe(true);
      const scans = sql.filter((s) => /tree_directory/i.test(s) && !/WHERE tree_id = \?1/i.test(s) && !/^INSERT OR IGNORE/i.test(s.trim()));
      expect(scans).toEqual([]);
      // A second placement within the minute reads no counts again, and counts the first one locally.
      const again = await statementsDuring(() => resolveHome(env, hex(600), { tenant: "t", namespace: "placed" }));
      expect(again.some((s) => s.includes("shard_trees"))).toBe(false);
      // A tree that has its row stays where it is, whatever the counts say now.
      await dir.prepare("UPDATE shard_trees SET trees = 0 WHERE shard = 'DB_3'").run();
      await dir.prepare("UPDATE shard_trees SET trees = 5000000 WHERE shard = 'DB_2'").run();
      forgetPlacementCounts();
      expect((await resolveHome(env, id, { tenant: "t", namespace: "placed" }))?.shard).toBe("DB_2");
    } finally {
      await dir.batch([
        dir.prepare("DELETE FROM shard_trees"),
        ...before.results.map((r) => dir.prepare("INSERT INTO shard_trees (shard, trees) VALUES (?1, ?2)").bind(r.shard, r.trees)),
      ]);
    }
  });
});
