import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { chat, generations, recorded, uniqueModel } from "./helpers";

const tools = [{ type: "function", function: { name: "get_order", parameters: { type: "object", properties: { order_id: { type: "string" } } } } }];
const ask = (model: string, orderId: string) => ({ model, tools, messages: [{ role: "user", content: `Refund order #${orderId} please` }] });
const bindings = (orderId: string) => ({ headers: { "muscle-mem-bindings": JSON.stringify({ order_id: orderId }) } });

describe("declared variables (muscle-mem-bindings)", () => {
  it("Should serve a recorded answer for new values once a second binding confirmed it, rendered into the tool-call arguments", async () => {
    const model = uniqueModel("decl");
    const first = await chat(ask(model, "A-1"), bindings("A-1"));
    expect(first.headers.get("muscle-mem-cache")).toBe("miss");
    await first.arrayBuffer();
    await recorded(ask(model, "A-1"), bindings("A-1"));
    // One binding is not evidence that the answer holds for other values: the second goes to the model.
    const second = await chat(ask(model, "B-72"), bindings("B-72"));
    expect(second.headers.get("muscle-mem-cache")).toBe("miss");
    await second.arrayBuffer();
    await recorded(ask(model, "B-72"), bindings("B-72"));
    const third = await chat(ask(model, "C-333"), bindings("C-333"));
    expect(third.headers.get("muscle-mem-cache")).toBe("hit");
    expect(third.headers.get("muscle-mem-template")).toBe("declared");
    const hit = (await third.json()) as OpenAI.ChatCompletion;
    const call = hit.choices[0].message.tool_calls?.[0];
    expect(call?.type === "function" && call.function).toEqual({ name: "get_order", arguments: '{"order_id":"C-333"}' });
    expect(await generations(model)).toBe(2);
  });

  it("Should keep declared trees apart from concrete ones", async () => {
    const model = uniqueModel("decl");
    await (await chat(ask(model, "A-1"), bindings("A-1"))).arrayBuffer();
    await recorded(ask(model, "A-1"), bindings("A-1"));
    const concrete = await chat(ask(model, "A-1"));
    expect(concrete.headers.get("muscle-mem-cache")).toBe("miss");
    await concrete.arrayBuffer();
  });

  it.each([
    ["not JSON", "{order"],
    ["a number value", '{"order_id":1}'],
    ["a bad name", '{"order id":"A-1"}'],
  ])("Should answer 400 in the error envelope for a header that is %s", async (_, header) => {
    const res = await chat(ask(uniqueModel(), "A-1"), { headers: { "muscle-mem-bindings": header } });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { code: string; param: string } };
    expect(body.error.code).toBe("invalid_request");
    expect(body.error.param).toBe("muscle-mem-bindings");
  });
});
