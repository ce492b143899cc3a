import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { armPruneAlarms } from "../../src/store/prune/sweep";
import { treeWriterOf } from "../../src/store/objects/tree-objects";
import { dbNamed, NAMES } from "./shard-helpers";

/** The cron's sweep (src/store/prune/sweep.ts) over four shards: each gets its share of the budget and its own cursor. */

const alarmOf = (id: string) => runInDurableObject(treeWriterOf(env, id), (_, state) => state.storage.getAlarm());

describe("the prune sweep over several shards", () => {
  it("Should split a run's budget evenly over the shards, each resuming from its own cursor", async () => {
    // Three trees with the lowest ids in each shard, written before alarms existed (no object yet).
    const ids = NAMES.map((_, s) => Array.from({ length: 3 }, (_, i) => `${s}${i}`.padStart(32, "0")));
    for (const [s, name] of NAMES.entries()) {
      const db = dbNamed(name);
      await db.batch(
        ids[s].map((id) =>
          db.prepare(`INSERT OR IGNORE INTO trees (id, tenant, namespace, model, frame, created_at) VALUES (?1, 't', 'n', 'm', '{}', 1)`).bind(id),
        ),
      );
    }
    await dbNamed("DB").prepare(`DELETE FROM prune_sweep`).run();

    expect(await armPruneAlarms(env, 8)).toEqual({ visited: 8, armed: 8, passesEnded: 0 });
    const cursors = await dbNamed("DB").prepare(`SELECT shard, after FROM prune_sweep ORDER BY shard`).all<{ shard: string; after: string }>();
    expect(cursors.results).toEqual(NAMES.map((name, s) => ({ shard: name, after: ids[s][1] })));
    for (const [s] of NAMES.entries()) {
      expect(await alarmOf(ids[s][1])).not.toBeNull();
      expect(await alarmOf(ids[s][2])).toBeNull();
    }
    for (const id of ids.flat()) await runInDurableObject(treeWriterOf(env, id), (_, state) => state.storage.deleteAlarm());
  });
});
