import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { coloCache } from "../../src/engine/lookup/colo-cache";
import { PRUNE_EVERY_MS, FIRST_PRUNE_WITHIN_MS } from "../../src/store/prune/alarm";
import { armPruneAlarms } from "../../src/store/prune/sweep";
import { treeWriterOf } from "../../src/store/objects/tree-objects";
import { storedCount } from "./api-helpers";
import { recording } from "./recordings";
import { runPrune, type PruneAccess } from "../../src/store/prune/prune";
import { recordGenerations, type RecordInput } from "../../src/store/tree/record";

/**
 * The stale prune per tree on its writer's alarm (src/store/prune/alarm.ts),
 * the cron's sweep that arms it (src/store/prune/sweep.ts), against real D1
 * and real Durable Objects. PRUNE_TTL_MS is wrangler.toml's 30 days.
 */

const TTL = 2_592_000_000;

function newTreeId(): string {
  return crypto.randomUUID().replaceAll("-", "");
}

function alarmOf(treeId: string): Promise<number | null> {
  return runInDurableObject(treeWriterOf(env, treeId), (_, state) => state.storage.getAlarm());
}

/** Ages every node of `hashes` past the TTL (recorded, never hit). */
async function age(hashes: readonly string[]): Promise<void> {
  await env.DB.batch(hashes.map((h) => env.DB.prepare(`UPDATE nodes SET created_at = 1, last_hit_at = NULL WHERE hash = ?1`).bind(h)));
}

describe("the stale prune on each tree's alarm", () => {
  it("Should arm the tree's alarm when a recording lands, one interval (plus at most a tenth) away", async () => {
    const treeId = newTreeId();
    const before = Date.now();
    await treeWriterOf(env, treeId).record(recording(treeId, ["hello"], "hi"));
    const at = await alarmOf(treeId);
    expect(at).not.toBeNull();
    expect(at!).toBeGreaterThanOrEqual(before + PRUNE_EVERY_MS);
    expect(at!).toBeLessThanOrEqual(Date.now() + PRUNE_EVERY_MS * 1.1);
  });

  it("Should prune the tree's stale paths on its alarm, forget their keys in this colo, and arm the next run", async () => {
    const treeId = newTreeId();
    const writer = treeWriterOf(env, treeId);
    const stale = recording(treeId, ["refund A-1"], "refunded A-1");
    const fresh = recording(treeId, ["refund B-2"], "refunded B-2");
    await writer.record(stale);
    await writer.record(fresh);
    await age([...stale.path.map((p) => p.hash), stale.answer.hash]);
    // This colo holds the stale key's answers for a minute: only the alarm's forgetting can remove them sooner.
    const colo = coloCache(60_000)!;
    await colo.put(stale.answer.parent, [
      {
        hash: stale.answer.hash,
        message: { role: "assistant", content: "refunded A-1" },
        observations: 1,
        finishReason: "stop",
        promptTokens: 1,
        completionTokens: 1,
        latencyMs: 1,
      },
    ]);
    expect(await colo.get(stale.answer.parent)).toBeDefined();

    const started = Date.now();
    expect(await runDurableObjectAlarm(writer)).toBe(true);

    const left = await env.DB.prepare(`SELECT hash FROM nodes WHERE tree_id = ?1 ORDER BY depth`).bind(treeId).all<{ hash: string }>();
    expect(left.results.map((r) => r.hash)).toEqual([fresh.path[0].hash, fresh.answer.hash]);
    const count = await env.DB.prepare(`SELECT node_count FROM trees WHERE id = ?1`).bind(treeId).first<{ node_count: number }>();
    expect(count?.node_count).toBe(2);
    expect(await colo.get(stale.answer.parent)).toBeUndefined();
    const next = await alarmOf(treeId);
    expect(next).not.toBeNull();
    expect(next!).toBeGreaterThanOrEqual(started + Math.min(TTL, PRUNE_EVERY_MS));
  });

  it("Should arm a bounded number of trees per cron run, resume where the last run stopped, and start the next pass at the end", async () => {
    // Trees written before alarms existed: rows in D1 and no object yet. Their ids sort before any random id.
    const ids = Array.from({ length: 5 }, (_, i) => i.toString(16).padStart(32, "0"));
    await env.DB.batch(
      ids.map((id) =>
        env.DB.prepare(`INSERT OR IGNORE INTO trees (id, tenant, namespace, model, frame, created_at) VALUES (?1, 't', 'n', 'm', '{}', 1)`).bind(id),
      ),
    );
    for (const id of ids) await runInDurableObject(treeWriterOf(env, id), (_, state) => state.storage.deleteAlarm());
    await env.DB.prepare(`DELETE FROM prune_sweep`).run();
    const total = (await env.DB.prepare(`SELECT count(*) AS n FROM trees`).first<{ n: number }>())?.n ?? 0;
    const cursor = async () =>
      (await env.DB.prepare(`SELECT after, passes FROM prune_sweep WHERE shard = 'DB'`).first<{ after: string; passes: number }>()) ?? null;

    const before = Date.now();
    expect(await armPruneAlarms(env, 2)).toEqual({ visited: 2, armed: 2, passesEnded: 0 });
    expect(await cursor()).toEqual({ after: ids[1], passes: 0 });
    const first = await Promise.all(ids.map(alarmOf));
    expect(first.slice(2)).toEqual([null, null, null]);
    for (const at of first.slice(0, 2)) expect(at!).toBeLessThanOrEqual(before + FIRST_PRUNE_WITHIN_MS);

    expect(await armPruneAlarms(env, 2)).toEqual({ visited: 2, armed: 2, passesEnded: 0 });
    expect(await cursor()).toEqual({ after: ids[3], passes: 0 });
    expect((await Promise.all(ids.map(alarmOf))).map((at) => at !== null)).toEqual([true, true, true, true, false]);

    // The rest of the shard in one run: the pass ends and the next run starts from the first tree.
    const rest = await armPruneAlarms(env, total + 100);
    expect(rest).toMatchObject({ visited: total - 4, passesEnded: 1 });
    expect(await cursor()).toEqual({ after: "", passes: 1 });
    expect(await alarmOf(ids[4])).not.toBeNull();
    expect(await armPruneAlarms(env, 1)).toEqual({ visited: 1, armed: 1, passesEnded: 0 });
    expect(await cursor()).toEqual({ after: ids[0], passes: 1 });
    for (const id of ids) await runInDurableObject(treeWriterOf(env, id), (_, state) => state.storage.deleteAlarm());
  });
});

describe("a long prune gives way to recordings", () => {
  /** A tree of `paths` stale conversations (question, answer, question, answer), written straight to D1 with the hashes recordings use. */
  async function seed(treeId: string, paths: number) {
    const recordings = Array.from({ length: paths }, (_, p) => recording(treeId, [`q ${p}`, `a ${p}`, `q2 ${p}`], `answer ${p}`));
    await env.DB.prepare(`INSERT INTO trees (id, tenant, namespace, model, frame, created_at) VALUES (?1, 't', 'default', 'm', '{"model":"m"}', 1)`)
      .bind(treeId)
      .run();
    const rows = recordings.flatMap((r) => [
      ...r.path.map((n, i) => ({ ...n, depth: i + 1, observations: 0 })),
      { ...r.answer, depth: r.path.length + 1, observations: 1 },
    ]);
    const statements = rows.map((n) =>
      env.DB.prepare(`INSERT INTO nodes (hash, parent, tree_id, depth, role, message, observations, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 1)`).bind(
        n.hash,
        n.parent,
        treeId,
        n.depth,
        n.role,
        n.json,
        n.observations,
      ),
    );
    for (let i = 0; i < statements.length; i += 500) await env.DB.batch(statements.slice(i, i + 500));
    return { recordings, nodes: rows.length };
  }

  /** Every node of the tree whose parent is missing (a first message's parent is the tree id). */
  async function orphans(treeId: string): Promise<number> {
    const row = await env.DB.prepare(
      `SELECT count(*) AS n FROM nodes n WHERE n.tree_id = ?1 AND NOT (n.depth = 1 AND n.parent = ?1) AND NOT EXISTS (SELECT 1 FROM nodes p WHERE p.hash = n.parent)`,
    )
      .bind(treeId)
      .first<{ n: number }>();
    return row?.n ?? -1;
  }

  async function left(treeId: string): Promise<Set<string>> {
    const rows = await env.DB.prepare(`SELECT hash FROM nodes WHERE tree_id = ?1`).bind(treeId).all<{ hash: string }>();
    return new Set(rows.results.map((r) => r.hash));
  }

  const criteria = () => ({ cutoff: Date.now() - 3_600_000, minHits: null });
  const hashesOf = (...inputs: RecordInput[]) => new Set(inputs.flatMap((r) => [...r.path, r.answer].map((n) => n.hash)));

  it("Should not hold the tree's writer for a whole prune: a recording sent while its pages run lands before it ends, with all its ancestors", async () => {
    const treeId = newTreeId();
    const { nodes } = await seed(treeId, 2500);
    const under = recording(treeId, ["q 0"], "a new answer");
    const deep = recording(treeId, ["q 2", "a 2", "q2 2"], "another answer 2");
    // Inside the object (one event), so that the order of its queue alone decides who waits for whom.
    const order = await runInDurableObject(treeWriterOf(env, treeId), async (writer) => {
      const events: string[] = [];
      const pruning = writer.prune({ kind: "stale", treeId, criteria: criteria(), dryRun: false }).then(() => events.push("pruned"));
      while ((await storedCount(treeId)) === nodes); // the first page of deletes has landed
      await Promise.all([writer.record(under), writer.record(deep)]).then(() => events.push("recorded"));
      await pruning;
      return events;
    });
    expect(order).toEqual(["recorded", "pruned"]);
    expect(await orphans(treeId)).toBe(0);
    expect(await left(treeId)).toEqual(hashesOf(under, deep));
    const count = await env.DB.prepare(`SELECT node_count FROM trees WHERE id = ?1`).bind(treeId).first<{ node_count: number }>();
    expect(count?.node_count).toBe(hashesOf(under, deep).size);
  }, 120_000);

  it("Should keep what recordings between two pages of a prune stored (a new child, an answer observed again, a path stored again), and leave no orphan", async () => {
    const treeId = newTreeId();
    const { recordings } = await seed(treeId, 2500);
    const under = recording(treeId, ["q 0"], "a new answer");
    const deep = recording(treeId, ["q 2", "a 2", "q2 2"], "another answer 2");
    // After the third page (the templates', then two of nodes), a recording runs, as the tree's writer runs one queued
    // while a page was in flight (src/store/prune/pages.ts queuedAccess: each page is one queued write).
    let pages = 0;
    let between: RecordInput[] = [];
    const access: PruneAccess = {
      read: async () => env.DB,
      write: async (page) => {
        const result = await page(env.DB);
        if (++pages === 3) {
          const stored = await left(treeId);
          between = [
            under,
            deep,
            ...recordings.filter((r) => !stored.has(r.answer.hash)).slice(0, 1),
            ...recordings.filter((r) => stored.has(r.answer.hash)).slice(0, 1),
          ];
          expect(between).toHaveLength(4);
          await recordGenerations(env.DB, between);
        }
        return result;
      },
    };
    await runPrune(access, { kind: "stale", treeId, criteria: criteria(), dryRun: false });

    expect(pages).toBeGreaterThan(4);
    expect(await orphans(treeId)).toBe(0);
    expect(await left(treeId)).toEqual(hashesOf(...between));
  }, 120_000);
});
