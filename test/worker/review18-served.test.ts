import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { ProviderRequest } from "../../src/cache/provider";
import { recordedPaths } from "../../src/engine/recorded-paths";
import { keptForChaining } from "../../src/engine/served-answer";
import { keyResponsesAnswer, keyResponsesRequest } from "../../src/providers/responses/key";
import { servedResponseId } from "../../src/providers/responses/previous";
import { resolvePreviousResponse } from "../../src/providers/responses/resolve";
import type { ResponsesRequest } from "../../src/providers/responses/schema";
import { pruneStale } from "../../src/store/prune/prune";
import { servedAnswerOf } from "../../src/store/tree/served-answers";

/**
 * Review of session 18's kept template answers (src/engine/served-answer.ts, src/store/tree/served-answers.ts) in
 * the pool's real D1: the same template answer kept twice, after what its first row was read through is gone.
 */
const hex = () => crypto.randomUUID().replaceAll("-", "");

describe("a template answer kept again", () => {
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
  const chained = (id: string): ProviderRequest<ResponsesRequest> => ({
    body: { model, previous_response_id: id, input: "thanks" },
    raw: "",
    url: new URL("http://mm.test/v1/responses"),
    headers: new Headers(),
  });

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
