import { describe, expect, it } from "vitest";
import { messageRecorded, postMessages } from "./messages.support";
import { withUpstream } from "./upstream-stub";

/**
 * The Messages API sends `caller: {type: "direct"}` on a tool call (the SDK's ToolUseBlock has it). Such an
 * answer is recorded, served back with its caller, JSON and streamed, and keyed as the same call without
 * it, so that a client that echoes the call either way walks the recorded path. Before, it was never
 * recorded: no tool call of that API was cached.
 */

const key = () => `sk-ant-caller-${crypto.randomUUID()}`;
const model = () => `claude-caller-${crypto.randomUUID().slice(0, 8)}`;
const caller = { type: "direct" };
const answer = (name: string, input: Record<string, unknown>, text: string) => ({
  id: "msg_upstream",
  type: "message",
  role: "assistant",
  model: "claude-x",
  content: [
    { type: "text", text },
    { type: "tool_use", id: `toolu_${name}`, name, input, caller },
  ],
  stop_reason: "tool_use",
  stop_sequence: null,
  usage: { input_tokens: 10, output_tokens: 12 },
});

describe("Anthropic tool calls with a caller", () => {
  it("Should record the answer, serve its caller back JSON and streamed, and hit the next turn whether the client echoes the caller or not", async () => {
    const k = key();
    const first = { model: model(), max_tokens: 64, messages: [{ role: "user", content: "Refund order A-1." }] };
    const miss = await withUpstream({ json: answer("get_order", { order_id: "A-1" }, "Let me look.") }, () => postMessages(first, { key: k }));
    expect(miss.headers.get("muscle-mem-cache")).toBe("miss");
    const sent = (await miss.json()) as { content: Array<Record<string, unknown>> };
    await messageRecorded(first, { key: k });

    const hit = await postMessages(first, { key: k });
    expect(hit.headers.get("muscle-mem-cache")).toBe("hit");
    const served = (await hit.json()) as { content: Array<Record<string, unknown>> };
    expect(served.content[1]).toMatchObject({ type: "tool_use", name: "get_order", input: { order_id: "A-1" }, caller });
    const streamed = await postMessages({ ...first, stream: true }, { key: k });
    expect(streamed.headers.get("muscle-mem-cache")).toBe("hit");
    expect(await streamed.text()).toContain('"caller":{"type":"direct"}');

    // The next turn, recorded with the call echoed as the model sent it (caller included)...
    const call = sent.content[1];
    const second = (echo: Record<string, unknown>) => ({
      ...first,
      messages: [
        ...first.messages,
        { role: "assistant", content: [sent.content[0], echo] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: call.id, content: "delivered, 42.50" }] },
      ],
    });
    const recordedTurn = await withUpstream({ json: answer("refund", { order_id: "A-1", amount: 42.5 }, "Refunding.") }, () =>
      postMessages(second(call), { key: k }),
    );
    expect(recordedTurn.headers.get("muscle-mem-cache")).toBe("miss");
    await recordedTurn.arrayBuffer();
    await messageRecorded(second(call), { key: k });
    // ...is a hit for a client that echoes the call without its caller.
    const { caller: _, ...bare } = call;
    const again = await postMessages(second(bare), { key: k, headers: { "cache-control": "only-if-cached" } });
    expect(again.status).toBe(200);
    expect(again.headers.get("muscle-mem-cache")).toBe("hit");
    expect(((await again.json()) as { content: Array<Record<string, unknown>> }).content[1]).toMatchObject({ name: "refund", caller });
  });
});
