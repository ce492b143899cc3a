import { env, exports } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { api, newKey, ok, onlyTree } from "./api-helpers";
import { eventually, uniqueModel } from "./helpers";
import { learningRan, settled } from "./settled";
import { ORDERS } from "../support/desk-orders";

/**
 * A learned template on Anthropic Messages serves the call as the model writes it: the scripted model answers
 * a text and a `refund` call whose input it writes with spaces and `"qty": 1.0` (kept as the node's
 * `input_json`, read through the template view as the call's arguments). After three orders, a fourth is
 * served from the template with that text, its own order id and email in it, in JSON and in a stream
 * (`input_json_delta`). Never `{"qty":1}`: the template's answer keeps the model's bytes.
 */

const written = (order: string, email: string) => `{"order_id": "${order}", "email": "${email}", "qty": 1.0}`;

let asked = 0;
beforeEach(() => {
  asked = 0;
  const real = globalThis.fetch;
  const origin = new URL(String(env.ANTHROPIC_BASE_URL)).origin;
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    const url = new URL(request.url);
    if (url.origin !== origin || request.method !== "POST" || !url.pathname.endsWith("/messages")) return real(input, init);
    const body = (await request.json()) as { model: string; messages: Array<{ content: string }> };
    asked++;
    const [, order, email] = /refund order (\S+), my email is (\S+)\./.exec(body.messages[0].content) ?? [];
    // The model's own text: the input with spaces and 1.0, which JSON.stringify of the parsed input would not give back.
    const text = `{"id":"msg_${asked}","type":"message","role":"assistant","model":"${body.model}","content":[{"type":"text","text":"Refunding ${order}."},{"type":"tool_use","id":"toolu_0${asked}","name":"refund","input":${written(order, email)}}],"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":5}}`;
    return new Response(text, { headers: { "content-type": "application/json" } });
  });
});
afterEach(() => vi.restoreAllMocks());

const send = (key: string, model: string, order: string, email: string, stream = false) =>
  exports.default.fetch(
    new Request("http://mm.test/v1/messages", {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": key, "anthropic-version": "2023-06-01" },
      body: JSON.stringify({
        model,
        max_tokens: 1024,
        ...(stream ? { stream: true } : {}),
        system: "You are the refund desk.",
        tools: [{ name: "refund", description: "Refund an order.", input_schema: { type: "object" } }],
        messages: [{ role: "user", content: `Please refund order ${order}, my email is ${email}.` }],
      }),
    }),
  );

describe("a learned template on Anthropic Messages", () => {
  it("Should serve new orders with the call's input as the model writes it, in JSON and in a stream", async () => {
    const key = newKey();
    const model = uniqueModel("tpl-anthropic-text");
    await settled(async () => {
      for (const [order, email] of ORDERS) {
        const res = await send(key, model, order, email);
        expect(res.headers.get("muscle-mem-cache")).toBe("miss");
        expect(await res.text()).toContain(written(order, email));
      }
    });
    await learningRan();
    const tree = (await onlyTree(key)).id;
    await eventually(
      async () => (await ok<{ data: Array<{ confirmed: boolean }> }>(api(`/trees/${tree}/templates`, { token: key }))).data.some((t) => t.confirmed),
      10_000,
    );

    const json = await settled(async () => {
      const res = await send(key, model, "D-4004", "dan@example.io");
      return { cache: res.headers.get("muscle-mem-cache"), template: res.headers.get("muscle-mem-template"), text: await res.text() };
    });
    expect(json.cache).toBe("hit");
    expect(json.template).not.toBeNull();
    expect(json.text).toContain(`"input":${written("D-4004", "dan@example.io")}`);
    expect(json.text).toContain('"text":"Refunding D-4004."');

    const streamed = await settled(async () => {
      const res = await send(key, model, "E-5005", "eve@example.com", true);
      return { cache: res.headers.get("muscle-mem-cache"), template: res.headers.get("muscle-mem-template"), text: await res.text() };
    });
    expect(streamed.cache).toBe("hit");
    expect(streamed.template).toBe(json.template);
    const deltas = streamed.text
      .split("\n")
      .filter((line) => line.startsWith("data: "))
      .map((line) => JSON.parse(line.slice(6)) as { delta?: { type?: string; partial_json?: string } })
      .filter((event) => event.delta?.type === "input_json_delta");
    expect(deltas.map((event) => event.delta?.partial_json)).toEqual([written("E-5005", "eve@example.com")]);
    expect(asked).toBe(3);
  });
});
