import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { childHash, walk } from "../../src/core/hash";
import { ANSWERS_SQL, readAnswers } from "../../src/store/tree/answers";
import { importNodes } from "../../src/store/objects/seed";
import { recordGeneration, recordStatements, ROWS_PER_INSERT, type RecordInput } from "../../src/store/tree/record";
import { recording } from "./recordings";

async function count(sql: string, ...binds: unknown[]): Promise<number> {
  const row = await env.DB.prepare(sql)
    .bind(...binds)
    .first<{ n: number }>();
  return row?.n ?? 0;
}

describe("recording in D1", () => {
  it("Should store a path once and count repeated answers as observations", async () => {
    const input = recording("tree-a", ["hi", "hello", "refund A-1"], "done");
    const first = await recordGeneration(env.DB, input);
    expect(first).toEqual({ nodesInserted: 4, answerIsNew: true });
    const again = await recordGeneration(env.DB, input);
    expect(again).toEqual({ nodesInserted: 0, answerIsNew: false });
    expect(await count("SELECT COUNT(*) AS n FROM nodes WHERE tree_id = ?", "tree-a")).toBe(4);
    const answers = await readAnswers(env.DB, input.answer.parent);
    expect(answers.map((a) => [a.message.content, a.observations])).toEqual([["done", 2]]);
    expect(await count("SELECT node_count AS n FROM trees WHERE id = ?", "tree-a")).toBe(4);
    expect(await count("SELECT misses AS n FROM trees WHERE id = ?", "tree-a")).toBe(2);
  });

  it("Should store the model's own message for an answer whose node a later request's history wrote first", async () => {
    // The model answered with content "" and a tool call; the client echoed it back as content null in the
    // next request, whose recording landed first. Both spell one canonical message (one hash).
    const call = { id: "c1", type: "function", function: { name: "get_order", arguments: '{"id":"A-1"}' } };
    const asSent = JSON.stringify({ role: "assistant", content: "", tool_calls: [call] });
    const echoed = JSON.stringify({ role: "assistant", content: null, tool_calls: [call] });
    const first = recording("tree-echo", ["refund A-1"], "unused");
    const answer = { ...first.answer, json: asSent };
    const later = recording("tree-echo", ["refund A-1"], "done");
    const laterPath = [...later.path, { hash: answer.hash, parent: answer.parent, role: "assistant", json: echoed }];
    const next: RecordInput = { ...later, path: laterPath, answer: { ...later.answer, parent: answer.hash, hash: childHash(answer.hash, later.answer.json) } };
    await recordGeneration(env.DB, next);
    await recordGeneration(env.DB, { ...first, answer });
    const [served] = await readAnswers(env.DB, answer.parent);
    expect(served.message).toEqual(JSON.parse(asSent));
    expect(served.observations).toBe(1);
    // A second observation keeps the message of the first.
    await recordGeneration(env.DB, { ...first, answer: { ...answer, json: echoed } });
    const [again] = await readAnswers(env.DB, answer.parent);
    expect(again.message).toEqual(JSON.parse(asSent));
    expect(again.observations).toBe(2);
  });

  it("Should import an answer's own message over the history that wrote its node first", async () => {
    const call = { id: "c1", type: "function", function: { name: "f", arguments: "{}" } };
    const asSent = JSON.stringify({ role: "assistant", content: "", tool_calls: [call] });
    const echoed = JSON.stringify({ role: "assistant", content: null, tool_calls: [call] });
    const base = recording("tree-import-echo", ["q"], "unused");
    const user = base.path[0];
    const node = (m: string, o: number) => ({ h: base.answer.hash, p: user.hash, d: 2, r: "assistant", m, o, pt: o, ct: o, f: o ? "tool_calls" : null });
    const batch = { treeId: "tree-import-echo", tenant: "t", namespace: "default", model: "m", frameJson: '{"model":"m"}' };
    const head = { h: user.hash, p: user.parent, d: 1, r: "user", m: user.json, o: 0, pt: 0, ct: 0, f: null };
    await importNodes(env.DB, { ...batch, nodes: [head, node(echoed, 0)] });
    await importNodes(env.DB, { ...batch, nodes: [head, node(asSent, 1)] });
    const [served] = await readAnswers(env.DB, user.hash);
    expect(served.message).toEqual(JSON.parse(asSent));
    await importNodes(env.DB, { ...batch, nodes: [head, node(echoed, 1)] });
    expect((await readAnswers(env.DB, user.hash))[0].message).toEqual(JSON.parse(asSent));
  });

  it("Should grow storage with the messages that differ, not with the prompts", async () => {
    const texts: string[] = [];
    for (let turn = 0; turn < 30; turn++) {
      texts.push(`question ${turn}`.padEnd(200, "."));
      await recordGeneration(env.DB, recording("tree-long", texts, `answer ${turn}`));
      texts.push(`answer ${turn}`);
    }
    // 30 requests carry 30 * 31 = 930 messages in all; the tree stores each message once.
    expect(await count("SELECT COUNT(*) AS n FROM nodes WHERE tree_id = ?", "tree-long")).toBe(60);
  });

  it("Should keep siblings apart and serve no path node that was never an answer", async () => {
    await recordGeneration(env.DB, recording("tree-b", ["q"], "one"));
    await recordGeneration(env.DB, recording("tree-b", ["q"], "two"));
    const parent = walk("tree-b", [{ role: "user", content: "q" }])[0].hash;
    expect((await readAnswers(env.DB, parent)).map((a) => a.message.content).sort()).toEqual(["one", "two"]);
    // "hello" is stored as a path node (depth 2) but the model never produced it here.
    await recordGeneration(env.DB, recording("tree-c", ["hi", "hello", "more"], "x"));
    const hi = walk("tree-c", [{ role: "user", content: "hi" }])[0].hash;
    expect(await readAnswers(env.DB, hi)).toEqual([]);
  });

  it("Should record a 1,000-message first conversation in about 1/8 of the statements, each under D1's 100 parameters", async () => {
    const texts = Array.from({ length: 1000 }, (_, i) => `turn ${i} about order #A-${i}`);
    const input = recording("tree-thousand", texts, "done");
    const { statements } = recordStatements(input, new Set(), 1);
    // tree row + ceil(1000 / 8) path inserts + the answer + the tree counters
    expect(statements).toHaveLength(1 + Math.ceil(1000 / ROWS_PER_INSERT) + 2);
    expect(Math.max(...statements.map((st) => st.params.length))).toBeLessThanOrEqual(100);
    expect(await recordGeneration(env.DB, input)).toEqual({ nodesInserted: 1001, answerIsNew: true });
    expect(await count("SELECT count(*) AS n FROM nodes WHERE tree_id = ?1", "tree-thousand")).toBe(1001);
    expect(await count("SELECT node_count AS n FROM trees WHERE id = ?1", "tree-thousand")).toBe(1001);
    const deepest = walk(
      "tree-thousand",
      texts.map((t, i) => ({ role: i % 2 ? "assistant" : "user", content: t })),
    ).at(-1)!.hash;
    expect(await readAnswers(env.DB, deepest)).toHaveLength(1);
  });

  it("Should look the answer up with one indexed query whatever the depth", async () => {
    const plan = await env.DB.prepare(`EXPLAIN QUERY PLAN ${ANSWERS_SQL}`).bind("x").all<{ detail: string }>();
    expect(plan.results.map((r) => r.detail).join(" ")).toContain("USING INDEX nodes_parent_idx");
  });
});
