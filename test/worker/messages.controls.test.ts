import { describe, expect, it } from "vitest";
import { generations, oneFlight, uniqueModel } from "./helpers";
import { messageRecorded, postMessages, refundTools } from "./messages.support";

const ask = (model: string) => ({ model, max_tokens: 64, tools: refundTools, messages: [{ role: "user", content: "Refund order #A-4 please" }] });

describe("POST /v1/messages controls and single flight", () => {
  it("Should make one generation for identical concurrent misses and serve the others from it", async () => {
    const model = uniqueModel("flight");
    const responses = await oneFlight(5, () => postMessages(ask(model), { key: "sk-ant-flight" }));
    const outcomes = responses.map((r) => r.headers.get("muscle-mem-cache")).sort();
    expect(outcomes).toEqual(["hit", "hit", "hit", "hit", "miss"]);
    const bodies = (await Promise.all(responses.map((r) => r.json()))) as Array<{ content: Array<{ type: string; name?: string; input?: unknown }> }>;
    for (const body of bodies) expect(body.content[1]).toMatchObject({ type: "tool_use", name: "get_order", input: { order_id: "A-4" } });
    expect(responses.filter((r) => r.headers.get("muscle-mem-single-flight") === "follower")).toHaveLength(4);
    expect(await generations(model)).toBe(1);
  });

  it("Should keep namespaces apart", async () => {
    const model = uniqueModel("a");
    await postMessages(ask(model), { key: "sk-ant-ns", headers: { "muscle-mem-namespace": "one" } });
    await messageRecorded(ask(model), { key: "sk-ant-ns", headers: { "muscle-mem-namespace": "one" } });
    const other = await postMessages(ask(model), { key: "sk-ant-ns", headers: { "muscle-mem-namespace": "two" } });
    expect(other.headers.get("muscle-mem-cache")).toBe("miss");
    expect(await generations(model)).toBe(2);
  });

  it("Should ask the model again with cache-control: no-cache and keep serving the agreeing answer", async () => {
    const model = uniqueModel("a");
    await postMessages(ask(model), { key: "sk-ant-nc" });
    await messageRecorded(ask(model), { key: "sk-ant-nc" });
    const fresh = await postMessages(ask(model), { key: "sk-ant-nc", headers: { "cache-control": "no-cache" } });
    expect(fresh.headers.get("muscle-mem-cache")).toBe("miss");
    await fresh.arrayBuffer();
    expect(await generations(model)).toBe(2);
    const hit = await postMessages(ask(model), { key: "sk-ant-nc" });
    expect(hit.headers.get("muscle-mem-cache")).toBe("hit");
    expect(await generations(model)).toBe(2);
  });
});
