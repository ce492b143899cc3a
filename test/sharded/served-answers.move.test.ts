import { describe, expect, it } from "vitest";
import { copyTree } from "../../src/store/shards/move-pages";
import { keepServedAnswer, servedAnswerOf } from "../../src/store/tree/served-answers";
import { dbNamed } from "./shard-helpers";

/** A tree's template answers kept for chaining (src/store/tree/served-answers.ts) go with it when it moves. */
describe("kept template answers and moves", () => {
  it("Should copy every kept answer of a tree to its new shard (more than a page)", async () => {
    const treeId = crypto.randomUUID().replaceAll("-", "");
    const hashes: string[] = [];
    for (let i = 0; i < 23; i++) {
      const answerHash = crypto.randomUUID().replaceAll("-", "");
      hashes.push(answerHash);
      await keepServedAnswer(dbNamed("DB_1"), "t", { treeId, answerHash, parent: "p", base: treeId, tail: [], answer: "{}", links: 0 }, 1_000 + i);
    }
    await copyTree(dbNamed("DB_1"), dbNamed("DB_2"), treeId);
    const moved = await Promise.all(hashes.map((h) => servedAnswerOf(dbNamed("DB_2"), "t", treeId, h)));
    expect(moved.map((row) => row?.answerHash)).toEqual(hashes);
    const n = await dbNamed("DB_2").prepare("SELECT count(*) AS n FROM served_answers WHERE tree_id = ?1").bind(treeId).first<{ n: number }>();
    expect(n?.n).toBe(23);
  });
});
