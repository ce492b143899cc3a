import { exports } from "cloudflare:workers";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { eventsOf, recordedResponse, responses } from "./responses.support";

const model = () => `echo-resp-${crypto.randomUUID().slice(0, 8)}`;
const tools = [
  {
    type: "function",
    name: "get_order",
    description: "Look up an order.",
    parameters: { type: "object", properties: { order_id: { type: "string" } }, required: ["order_id"] },
    strict: false,
  },
];

/** A conversation after one tool call, as @openai/agents sends it: the call and its output, with ids. */
function afterToolCall(m: string, status: string) {
  return {
    model: m,
    instructions: "You are a refund desk.",
    tools,
    input: [
      { role: "user", content: "Refund order #A-1." },
      { type: "function_call", id: "fc_up1", call_id: "call_up1", name: "get_order", arguments: '{"order_id":"A-1"}', status: "completed" },
      { type: "function_call_output", call_id: "call_up1", output: JSON.stringify({ order_id: "A-1", status }) },
    ],
  };
}

interface ResponseJson {
  id: string;
  output: Array<{ type: string; id: string; content?: Array<{ text: string }> }>;
}

describe("POST /v1/responses (cached)", () => {
  it("Should miss, record, then serve the repeat from the tree without the model", async () => {
    const body = { model: model(), input: "hello there" };
    const first = await responses(body);
    expect(first.headers.get("muscle-mem-cache")).toBe("miss");
    const missed = (await first.json()) as ResponseJson;
    expect(missed.id).toMatch(/^resp_scripted/);
    await recordedResponse(body);

    const again = await responses(body);
    expect(again.headers.get("muscle-mem-cache")).toBe("hit");
    expect(again.headers.get("muscle-mem-node")).toMatch(/^[0-9a-f]{32}$/);
    expect(again.headers.get("server-timing")).toMatch(/parse;dur=\d+, lookup;dur=\d+/);
    const hit = (await again.json()) as ResponseJson;
    // A fresh response id the upstream never issued: the model was not asked.
    expect(hit.id).toMatch(/^resp_mm[0-9a-f]{72}$/);
    expect(hit.output[0].content?.[0].text).toBe("echo: hello there");
    expect(hit.output[0].id).not.toBe(missed.output[0].id);
  });

  it("Should serve a streamed hit as the Responses event sequence the OpenAI SDK reads", async () => {
    const body = { model: model(), input: "stream me" };
    await (await responses(body)).arrayBuffer();
    await recordedResponse(body);
    const client = new OpenAI({
      apiKey: "sk-resp-default",
      baseURL: "http://mm.test/v1",
      maxRetries: 0,
      fetch: (input, init) => exports.default.fetch(new Request(input, init)),
    });
    const stream = await client.responses.create({ ...body, stream: true });
    const types: string[] = [];
    let text = "";
    let final: OpenAI.Responses.Response | undefined;
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === "response.output_text.delta") text += event.delta;
      if (event.type === "response.completed") final = event.response;
    }
    expect(types).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.completed",
    ]);
    expect(text).toBe("echo: stream me");
    const item = final?.output[0];
    expect(item?.type === "message" && item.content[0].type === "output_text" ? item.content[0].text : null).toBe("echo: stream me");
  });

  it("Should record a streamed miss and serve it as JSON", async () => {
    const body = { model: model(), input: "streamed first" };
    const first = await responses({ ...body, stream: true });
    expect(first.headers.get("muscle-mem-cache")).toBe("miss");
    const events = eventsOf(await first.text());
    expect(events.at(-1)?.type).toBe("response.completed");
    await recordedResponse(body);
    const hit = await responses(body);
    expect(hit.headers.get("muscle-mem-cache")).toBe("hit");
    expect(((await hit.json()) as ResponseJson).output[0].content?.[0].text).toBe("echo: streamed first");
  });

  it("Should branch on a changed tool result and hit each branch on repeat", async () => {
    const m = model();
    expect((await responses(afterToolCall(m, "delivered"))).headers.get("muscle-mem-cache")).toBe("miss");
    await recordedResponse(afterToolCall(m, "delivered"));
    const shipped = await responses(afterToolCall(m, "shipped"));
    expect(shipped.headers.get("muscle-mem-cache")).toBe("miss");
    await shipped.arrayBuffer();
    await recordedResponse(afterToolCall(m, "shipped"));
    // Other item ids and call ids key the same path: they are ordinals in the key.
    const echoed = afterToolCall(m, "delivered");
    echoed.input[1] = { ...echoed.input[1], id: "fc_other", call_id: "call_other" } as (typeof echoed.input)[1];
    echoed.input[2] = { ...echoed.input[2], call_id: "call_other" } as (typeof echoed.input)[2];
    const hit = await responses(echoed);
    expect(hit.headers.get("muscle-mem-cache")).toBe("hit");
  });

  it("Should keep another key's cache apart, and answer a request without a key from the model", async () => {
    const body = { model: model(), input: "mine" };
    await (await responses(body, { key: "sk-resp-owner" })).arrayBuffer();
    await recordedResponse(body, { key: "sk-resp-owner" });
    const other = await responses(body, { key: "sk-resp-other" });
    expect(other.headers.get("muscle-mem-cache")).toBe("miss");
    await other.arrayBuffer();
    const anonymous = await responses(body, { key: null });
    expect(anonymous.headers.get("muscle-mem-cache")).toBe("bypass");
    await anonymous.arrayBuffer();
  });

  it("Should honour cache controls: only-if-cached 504 in OpenAI's envelope, no-store, namespaces", async () => {
    const body = { model: model(), input: "controls" };
    const notCached = await responses(body, { headers: { "cache-control": "only-if-cached" } });
    expect(notCached.status).toBe(504);
    expect(await notCached.json()).toMatchObject({ error: { code: "not_cached", type: "cache_miss" } });
    const noStore = await responses(body, { headers: { "cache-control": "no-store" } });
    expect(noStore.headers.get("muscle-mem-cache")).toBe("bypass");
    await noStore.arrayBuffer();
    expect((await responses(body, { headers: { "cache-control": "only-if-cached" } })).status).toBe(504);
    await (await responses(body, { headers: { "muscle-mem-namespace": "ns-a" } })).arrayBuffer();
    await recordedResponse(body, { headers: { "muscle-mem-namespace": "ns-a" } });
    expect((await responses(body, { headers: { "cache-control": "only-if-cached" } })).status).toBe(504);
  });
});
