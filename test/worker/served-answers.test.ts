import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { ProviderRequest, ServedAnswer } from "../../src/cache/provider";
import { recordInputOf } from "../../src/core/recording";
import { recordedPaths } from "../../src/engine/recorded-paths";
import { keptForChaining } from "../../src/engine/served-answer";
import { keyResponsesAnswer, keyResponsesRequest } from "../../src/providers/responses/key";
import { servedResponseId } from "../../src/providers/responses/previous";
import { resolvePreviousResponse } from "../../src/providers/responses/resolve";
import type { ResponsesRequest } from "../../src/providers/responses/schema";
import { pruneStale } from "../../src/store/prune/prune";
import { drainTree } from "../../src/store/shards/drain-tree";
import { recordGeneration } from "../../src/store/tree/record";
import { keepServedAnswer, knownSteps, servedAnswerOf } from "../../src/store/tree/served-answers";

/** Template answers kept for chaining (src/store/tree/served-answers.ts) in the pool's real D1: read per tenant, aged out, deleted with the tree. */
const hex = () => crypto.randomUUID().replaceAll("-", "");
const rowOf = (treeId: string, answerHash = hex()): ServedAnswer => ({
  treeId,
  answerHash,
  parent: hex(),
  base: treeId,
  tail: [{ hash: hex(), message: '{"role":"user","content":[{"type":"text","text":"hi"}]}' }],
  answer: '{"role":"assistant","items":[]}',
  links: 0,
});
const count = async (treeId: string) =>
  (await env.DB.prepare("SELECT count(*) AS n FROM served_answers WHERE tree_id = ?1").bind(treeId).first<{ n: number }>())?.n ?? 0;

describe("kept template answers", () => {
  it("Should read a kept answer back for its tenant only, and refresh it when the same answer is served again", async () => {
    const treeId = hex();
    const row = rowOf(treeId);
    await keepServedAnswer(env.DB, "tenant-a", row, 1_000);
    expect(await servedAnswerOf(env.DB, "tenant-a", treeId, row.answerHash)).toEqual(row);
    expect(await servedAnswerOf(env.DB, "tenant-b", treeId, row.answerHash)).toBeNull();
    expect(await servedAnswerOf(env.DB, "tenant-a", hex(), row.answerHash)).toBeNull();
    await keepServedAnswer(env.DB, "tenant-a", row, 5_000);
    const stored = await env.DB.prepare("SELECT created_at AS at FROM served_answers WHERE answer_hash = ?1").bind(row.answerHash).all<{ at: number }>();
    expect(stored.results).toEqual([{ at: 5_000 }]);
  });

  it("Should delete the tree's answers kept before the stale prune's cutoff, in pages, and keep the newer ones and other trees'", async () => {
    const treeId = hex();
    const other = hex();
    for (let i = 0; i < 130; i++) await keepServedAnswer(env.DB, "t", rowOf(treeId), 1_000 + i);
    await keepServedAnswer(env.DB, "t", rowOf(treeId), 9_000);
    await keepServedAnswer(env.DB, "t", rowOf(other), 1_000);
    await pruneStale(env.DB, treeId, { cutoff: 5_000, minHits: null });
    expect([await count(treeId), await count(other)]).toEqual([1, 1]);
  });

  it("Should delete every kept answer of a tree drained from its shard", async () => {
    const treeId = hex();
    await keepServedAnswer(env.DB, "t", rowOf(treeId));
    await keepServedAnswer(env.DB, "t", rowOf(treeId));
    expect(await count(treeId)).toBe(2);
    await drainTree(env.DB, treeId);
    expect(await count(treeId)).toBe(0);
  });
});

describe("a kept template answer's base", () => {
  const scope = { tenant: `t-${hex()}`, namespace: "default", maxMessageBytes: 900_000 };
  const keyOf = (body: ResponsesRequest) => {
    const keyed = keyResponsesRequest(body, scope);
    if (!keyed.ok || !keyed.key.chain) throw new Error(JSON.stringify(keyed));
    return { ...keyed.key, chain: keyed.key.chain };
  };
  const model = `gpt-${hex()}`;
  const user = { role: "user" as const, content: "refund A-1" };
  const call = { type: "function_call", call_id: "call_up", name: "get_order", arguments: '{"id":"A-1"}' };
  const output = { type: "function_call_output", call_id: "call_up", output: "delivered" };
  const reply = [{ type: "message", role: "assistant", content: [{ type: "output_text", text: "Refunded." }] }];

  it("Should keep only what follows the deepest recorded step of a whole conversation sent without an id, and resolve it through that node", async () => {
    const first = keyOf({ model, input: [user] });
    const recorded = keyResponsesAnswer(first, [call]);
    if (!recorded) throw new Error("no answer");
    await recordGeneration(env.DB, recordInputOf(first, recorded, "completed", { prompt: 1, completion: 1 }, 10, 5));

    const second = keyOf({ model, input: [user, call, output] } as ResponsesRequest);
    expect(second.chain).toEqual({ base: second.treeId, links: 0 });
    expect(second.path[1].hash).toBe(recorded.hash);
    const served = keyResponsesAnswer(second, reply);
    if (!served) throw new Error("no answer");
    expect(await keptForChaining(env.DB, 5000, second, second.chain, served.hash, JSON.parse(served.json))).toBe(true);
    const row = await servedAnswerOf(env.DB, scope.tenant, second.treeId, served.hash);
    expect([row?.base, row?.links, row?.tail.map((s) => s.hash)]).toEqual([recorded.hash, 0, [second.key]]);

    const sent: ProviderRequest<ResponsesRequest> = {
      body: { model, previous_response_id: servedResponseId(second.treeId, served.hash), input: "thanks" },
      raw: "",
      url: new URL("http://mm.test/v1/responses"),
      headers: new Headers(),
    };
    const resolved = await resolvePreviousResponse(sent, recordedPaths(env, scope.tenant, 1000));
    const items = resolved.body.input as Array<Record<string, unknown>>;
    expect(items.map((i) => i.type ?? i.role)).toEqual(["user", "function_call", "function_call_output", "message", "user"]);
    expect(
      keyOf(resolved.body)
        .path.slice(0, 4)
        .map((s) => s.hash),
    ).toEqual([first.key, recorded.hash, second.key, served.hash]);
    // Another tenant's kept answers and nodes are no base, and its id resolves to nothing.
    expect(await resolvePreviousResponse(sent, recordedPaths(env, `t-${hex()}`, 1000))).toBe(sent);
  });

  it("Should read recorded steps and the tenant's kept answers (one deeper than theirs), not another tenant's", async () => {
    const treeId = hex();
    const [a, b, c] = [hex(), hex(), hex()];
    await keepServedAnswer(env.DB, "mine", { ...rowOf(treeId, b), links: 2 });
    await keepServedAnswer(env.DB, "theirs", rowOf(treeId, c));
    const known = await knownSteps(env.DB, "mine", treeId, [a, b, c]);
    expect([...known]).toEqual([[b, 3]]);
  });

  const chained = (id: string): ProviderRequest<ResponsesRequest> => ({
    body: { model, previous_response_id: id, input: "thanks" },
    raw: "",
    url: new URL("http://mm.test/v1/responses"),
    headers: new Headers(),
  });

  // A review of the kept answers (11-28) found this lost: a repeat serve refreshed only the row's age.
  it("Should resolve an answer served again whole after the kept answer its first row was read through was pruned", async () => {
    // The first turn is a template's answer, kept (no recorded node).
    const first = keyOf({ model, input: [user] });
    const a1 = keyResponsesAnswer(first, [call]);
    if (!a1) throw new Error("no answer");
    expect(await keptForChaining(env.DB, 5000, first, first.chain, a1.hash, JSON.parse(a1.json))).toBe(true);
    // The whole conversation sent again, no id: its answer is kept after the first kept answer.
    const second = keyOf({ model, input: [user, call, output] } as ResponsesRequest);
    const a2 = keyResponsesAnswer(second, reply);
    if (!a2) throw new Error("no answer");
    expect(await keptForChaining(env.DB, 5000, second, second.chain, a2.hash, JSON.parse(a2.json))).toBe(true);
    expect((await servedAnswerOf(env.DB, scope.tenant, second.treeId, a2.hash))?.base).toBe(a1.hash);

    // The stale prune deletes the first kept answer (served long ago), and the same request is served the same answer again.
    await env.DB.prepare("UPDATE served_answers SET created_at = 1 WHERE answer_hash = ?1").bind(a1.hash).run();
    await pruneStale(env.DB, second.treeId, { cutoff: 1_000, minHits: null });
    expect(await servedAnswerOf(env.DB, scope.tenant, second.treeId, a1.hash)).toBeNull();
    expect(await keptForChaining(env.DB, 5000, second, second.chain, a2.hash, JSON.parse(a2.json))).toBe(true);

    // The id just served resolves: the row kept now holds the whole conversation (before: the old row, read through a pruned base).
    const sent = chained(servedResponseId(second.treeId, a2.hash));
    const resolved = await resolvePreviousResponse(sent, recordedPaths(env, scope.tenant, 1000));
    expect(resolved).not.toBe(sent);
    const items = resolved.body.input as Array<Record<string, unknown>>;
    expect(items.map((i) => i.type ?? i.role)).toEqual(["user", "function_call", "function_call_output", "message", "user"]);
    expect(
      keyOf(resolved.body)
        .path.slice(0, 4)
        .map((s) => s.hash),
    ).toEqual([first.key, a1.hash, second.key, a2.hash]);
  });
});
