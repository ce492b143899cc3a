import type OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { REFUND_TOOLS } from "../../tools/refund-desk";
import { chat, generations, recorded, uniqueModel } from "./helpers";

/**
 * A refund-desk turn after the order was looked up: the scripted model answers
 * `refund` with `{"order_id":…,"amount":…}`, keys not in sorted order.
 */
const turn = (model: string, orderId: string, amount: number, stream = false) => ({
  model,
  stream,
  tools: REFUND_TOOLS,
  messages: [
    { role: "user", content: `Refund order #${orderId} please` },
    {
      role: "assistant",
      content: null,
      tool_calls: [{ id: "call_look", type: "function", function: { name: "get_order", arguments: JSON.stringify({ order_id: orderId }) } }],
    },
    { role: "tool", tool_call_id: "call_look", content: JSON.stringify({ order_id: orderId, status: "delivered", amount }) },
  ],
});
const declare = (orderId: string, amount: number) => ({ headers: { "muscle-mem-bindings": JSON.stringify({ order_id: orderId, amount: String(amount) }) } });

/** The tool-call arguments of a streamed answer, joined from its deltas. */
function streamedArguments(sse: string): string {
  return sse
    .split("\n")
    .filter((line) => line.startsWith("data: {"))
    .map((line) => JSON.parse(line.slice(6)) as OpenAI.ChatCompletionChunk)
    .map((chunk) => chunk.choices[0]?.delta.tool_calls?.[0]?.function?.arguments ?? "")
    .join("");
}

describe("declared hits keep the model's argument text", () => {
  it("Should serve a declared hit's tool-call arguments in the key order the model wrote, with the new values", async () => {
    const model = uniqueModel("decl-order");
    const first = await chat(turn(model, "A-1", 1999), declare("A-1", 1999));
    expect(first.headers.get("muscle-mem-cache")).toBe("miss");
    const missed = (await first.json()) as OpenAI.ChatCompletion;
    const modelArgs = missed.choices[0].message.tool_calls?.[0];
    expect(modelArgs?.type === "function" && modelArgs.function.arguments).toBe('{"order_id":"A-1","amount":1999}');
    await recorded(turn(model, "A-1", 1999), declare("A-1", 1999));

    const same = await chat(turn(model, "A-1", 1999), declare("A-1", 1999));
    expect(same.headers.get("muscle-mem-cache")).toBe("hit");
    const sameCall = ((await same.json()) as OpenAI.ChatCompletion).choices[0].message.tool_calls?.[0];
    expect(sameCall?.type === "function" && sameCall.function.arguments).toBe('{"order_id":"A-1","amount":1999}');

    // A second binding goes to the model once; its answer confirms the stored one (DECLARED_MIN_BINDINGS=2).
    const confirming = await chat(turn(model, "B-72", 2450), declare("B-72", 2450));
    expect(confirming.headers.get("muscle-mem-cache")).toBe("miss");
    await confirming.arrayBuffer();
    await recorded(turn(model, "B-72", 2450), declare("B-72", 2450));

    const other = await chat(turn(model, "D-404", 3125), declare("D-404", 3125));
    expect(other.headers.get("muscle-mem-cache")).toBe("hit");
    expect(other.headers.get("muscle-mem-template")).toBe("declared");
    const call = ((await other.json()) as OpenAI.ChatCompletion).choices[0].message.tool_calls?.[0];
    expect(call?.type === "function" && call.function).toEqual({ name: "refund", arguments: '{"order_id":"D-404","amount":3125}' });

    // Amounts need four digits to be declared (a shorter number is refused as ambiguous: see bindings.ts ambiguityOf).
    const stream = await chat(turn(model, "C-3", 7500, true), declare("C-3", 7500));
    expect(stream.headers.get("muscle-mem-cache")).toBe("hit");
    expect(streamedArguments(await stream.text())).toBe('{"order_id":"C-3","amount":7500}');
    expect(await generations(model)).toBe(2);
  });
});
