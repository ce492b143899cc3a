import { describe, expect, it } from "vitest";
import { keyResponsesAnswer, keyResponsesRequest } from "../../src/providers/responses/key";
import { inputItemsOf, parseServedResponseId, servedResponseId, upstreamResponseId, withPreviousInput } from "../../src/providers/responses/previous";
import { servedIds } from "../../src/providers/responses/render";
import type { ResponsesRequest } from "../../src/providers/responses/schema";

const scope = { tenant: "t", namespace: "default", maxMessageBytes: 900_000 };
const hex = (c: string) => c.repeat(32);

function keyOf(body: Partial<ResponsesRequest>) {
  const keyed = keyResponsesRequest({ model: "gpt-x", input: "hi", ...body } as ResponsesRequest, scope);
  if (!keyed.ok) throw new Error(JSON.stringify(keyed));
  return keyed.key;
}

describe("previous_response_id of a served response", () => {
  it("Should name the tree and the answer node, and nothing else", () => {
    const id = servedResponseId(hex("a"), hex("b"), "01234567");
    expect(parseServedResponseId(id)).toEqual({ treeId: hex("a"), answerHash: hex("b") });
    expect(parseServedResponseId("resp_67ccd2bed1ec8190b14f964abc0542670bb6a6b452d3795b")).toBeNull();
    expect(parseServedResponseId(`${id}0`)).toBeNull();
  });

  it("Should spell the stored path out as input that keys the same nodes, the answer's calls under their served ids", () => {
    const input = [
      { role: "developer", content: "be kind" },
      { role: "user", content: "go" },
      { type: "function_call", call_id: "c_up", name: "get_order", arguments: '{"order_id":"A-1"}' },
      { type: "function_call_output", call_id: "c_up", output: "delivered" },
    ];
    const key = keyOf({ input });
    const answer = keyResponsesAnswer(key, [
      { type: "message", role: "assistant", content: [{ type: "output_text", text: "Refunding." }] },
      { type: "function_call", call_id: "c2", name: "refund", arguments: '{"x":1}' },
    ]);
    if (!answer) throw new Error("no answer");
    const nodes = [...key.path.map((step) => JSON.parse(step.json) as Record<string, unknown>), JSON.parse(answer.json) as Record<string, unknown>];
    const items = inputItemsOf(nodes, answer.hash);
    if (!items) throw new Error("not convertible");
    const served = servedIds(answer.hash, 1).call;
    expect(items.at(-1)).toMatchObject({ type: "function_call", call_id: served, arguments: '{"x":1}' });
    // The continuation the client sends, keyed with the resolved input, walks through the stored path and the answer.
    const next = withPreviousInput(
      { model: "gpt-x", input: [{ type: "function_call_output", call_id: served, output: "ok" }], previous_response_id: "resp_mm" },
      items,
    );
    expect(next.previous_response_id).toBeUndefined();
    const resolved = keyOf({ input: next.input });
    expect(resolved.path[3].hash).toBe(key.key);
    expect(resolved.path[4].hash).toBe(answer.hash);
    expect(resolved.path).toHaveLength(6);
  });

  it("Should give the answer's calls the upstream's call ids when resolved from an upstream id, and refuse ids that are not one per call", () => {
    const key = keyOf({ input: [{ role: "user", content: "go" }] });
    const answer = keyResponsesAnswer(key, [
      { type: "function_call", call_id: "call_upA", name: "get_order", arguments: "{}" },
      { type: "function_call", call_id: "call_upB", name: "refund", arguments: "{}" },
    ]);
    if (!answer) throw new Error("no answer");
    const nodes = [...key.path.map((step) => JSON.parse(step.json) as Record<string, unknown>), JSON.parse(answer.json) as Record<string, unknown>];
    const items = inputItemsOf(nodes, ["call_upA", "call_upB"]);
    expect(items?.slice(-2).map((i) => i.call_id)).toEqual(["call_upA", "call_upB"]);
    const next = withPreviousInput(
      {
        model: "gpt-x",
        input: [
          { type: "function_call_output", call_id: "call_upB", output: "ok" },
          { type: "function_call_output", call_id: "call_upA", output: "found" },
        ],
      },
      items ?? [],
    );
    expect(keyOf({ input: next.input }).path[1].hash).toBe(answer.hash);
    expect(inputItemsOf(nodes, ["call_upA"])).toBeNull();
    expect(upstreamResponseId.safeParse("resp_67ccd2bed1ec8190b14f964abc0542670bb6a6b452d3795b").success).toBe(true);
    expect(upstreamResponseId.safeParse(servedResponseId(hex("a"), hex("b"), "01234567")).success).toBe(false);
    expect(upstreamResponseId.safeParse("resp with space").success).toBe(false);
  });

  it("Should refuse nodes of another API", () => {
    expect(inputItemsOf([{ role: "assistant", content: "chat text" }], hex("c"))).toBeNull();
    expect(inputItemsOf([{ role: "user", content: [{ type: "image" }] }], hex("c"))).toBeNull();
  });
});
