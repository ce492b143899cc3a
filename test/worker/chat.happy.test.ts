import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { chat, generations, recorded, uniqueModel } from "./helpers";

const tools = [{ type: "function", function: { name: "get_order", parameters: { type: "object", properties: { order_id: { type: "string" } } } } }];

describe("POST /v1/chat/completions", () => {
  it("Should miss, record, then serve the same tool call from the tree", async () => {
    const model = uniqueModel();
    const body = { model, tools, messages: [{ role: "user", content: "Refund order #A-1 please" }] };
    const first = await chat(body);
    expect(first.status).toBe(200);
    expect(first.headers.get("muscle-mem-cache")).toBe("miss");
    const missed = (await first.json()) as OpenAI.ChatCompletion;
    await recorded(body);
    const second = await chat(body);
    expect(second.headers.get("muscle-mem-cache")).toBe("hit");
    const hit = (await second.json()) as OpenAI.ChatCompletion;
    expect(hit.object).toBe("chat.completion");
    expect(hit.choices[0].finish_reason).toBe("tool_calls");
    const call = hit.choices[0].message.tool_calls?.[0];
    expect(call?.type === "function" && call.function).toEqual({ name: "get_order", arguments: '{"order_id":"A-1"}' });
    expect(call?.id).not.toBe(missed.choices[0].message.tool_calls?.[0].id);
    expect(await generations(model)).toBe(1);
  });
});
