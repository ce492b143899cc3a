import { env, exports } from "cloudflare:workers";
import OpenAI from "openai";
import { tenantOf } from "../../src/core/hash";
import { describe, expect, it } from "vitest";
import { SseAssembler } from "../../src/providers/chat/sse-assembler";
import { chat, generations, oneFlight, recorded, uniqueModel } from "./helpers";
import { settled } from "./settled";
import { chunks, completion, withUpstream } from "./upstream-stub";

const tools = [{ type: "function", function: { name: "get_order", parameters: { type: "object", properties: { order_id: { type: "string" } } } } }];
const ask = (model: string, text = "Refund order #A-1 please") => ({ model, tools, messages: [{ role: "user", content: text }] });

/** The official client, talking to the Worker in this isolate. */
function sdk(key = "sk-test-default"): OpenAI {
  return new OpenAI({ apiKey: key, baseURL: "http://mm.test/v1", maxRetries: 0, fetch: (url, init) => exports.default.fetch(new Request(url, init)) });
}

describe("POST /v1/chat/completions", () => {
  it("Should miss, record, then serve the same tool call from the tree", async () => {
    const model = uniqueModel();
    const first = await chat(ask(model));
    expect(first.status).toBe(200);
    expect(first.headers.get("muscle-mem-cache")).toBe("miss");
    const missed = (await first.json()) as OpenAI.ChatCompletion;
    await recorded(ask(model));
    const second = await chat(ask(model));
    expect(second.headers.get("muscle-mem-cache")).toBe("hit");
    const hit = (await second.json()) as OpenAI.ChatCompletion;
    expect(hit.object).toBe("chat.completion");
    expect(hit.choices[0].finish_reason).toBe("tool_calls");
    const call = hit.choices[0].message.tool_calls?.[0];
    expect(call?.type === "function" && call.function).toEqual({ name: "get_order", arguments: '{"order_id":"A-1"}' });
    expect(call?.id).not.toBe(missed.choices[0].message.tool_calls?.[0].id);
    expect(await generations(model)).toBe(1);
  });

  it("Should let the official client parse a hit, streamed and not", async () => {
    const model = uniqueModel();
    const client = sdk();
    const body = { model, messages: [{ role: "user" as const, content: "Refund order #B-7" }] };
    await client.chat.completions.create(body);
    await recorded(body);
    const { data, response } = await client.chat.completions.create(body).withResponse();
    expect(response.headers.get("muscle-mem-cache")).toBe("hit");
    const fn = data.choices[0].message.tool_calls?.[0];
    expect(fn?.type === "function" && JSON.parse(fn.function.arguments)).toEqual({ order_id: "B-7" });
    const stream = await client.chat.completions.create({ ...body, stream: true, stream_options: { include_usage: true } });
    let args = "";
    let usage: OpenAI.CompletionUsage | null | undefined;
    let finish: string | null | undefined;
    for await (const chunk of stream) {
      args += chunk.choices[0]?.delta.tool_calls?.[0]?.function?.arguments ?? "";
      finish = chunk.choices[0]?.finish_reason ?? finish;
      usage = chunk.usage ?? usage;
    }
    expect(JSON.parse(args)).toEqual({ order_id: "B-7" });
    expect(finish).toBe("tool_calls");
    expect(usage?.total_tokens).toBeGreaterThan(0);
    expect(await generations(model)).toBe(1);
  });

  it("Should record a streamed miss once the stream completes and replay it", async () => {
    const model = uniqueModel("echo");
    const body = { model, stream: true, messages: [{ role: "user", content: "héllo wörld ✓" }] };
    const first = await chat(body);
    expect(first.headers.get("muscle-mem-cache")).toBe("miss");
    expect(first.headers.get("content-type")).toContain("text/event-stream");
    const text = await first.text();
    expect(text).toContain("data: [DONE]");
    await recorded(body);
    const hit = await chat({ ...body, stream: false });
    expect(((await hit.json()) as OpenAI.ChatCompletion).choices[0].message.content).toBe("echo: héllo wörld ✓");
  });

  it("Should keep a conversation's echoed ids consistent across turns", async () => {
    const model = uniqueModel();
    const client = sdk();
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: "user", content: "Refund order #C-3" }];
    const turn1 = (await client.chat.completions.create({ model, tools: tools as OpenAI.ChatCompletionTool[], messages })).choices[0].message;
    messages.push(turn1, { role: "tool", tool_call_id: turn1.tool_calls![0].id, content: JSON.stringify({ order_id: "C-3", status: "shipped" }) });
    const turn2 = (await client.chat.completions.create({ model, tools: tools as OpenAI.ChatCompletionTool[], messages })).choices[0].message;
    expect(turn2.content).toContain("shipped");
    // Replay: the hit's fresh ids are echoed back and still walk the recorded path.
    await recorded({ model, tools, messages: messages.slice(0, 1) });
    const replay1 = await client.chat.completions.create({ model, tools: tools as OpenAI.ChatCompletionTool[], messages: messages.slice(0, 1) }).withResponse();
    expect(replay1.response.headers.get("muscle-mem-cache")).toBe("hit");
    const echoed = replay1.data.choices[0].message;
    const replayMessages: OpenAI.ChatCompletionMessageParam[] = [
      messages[0],
      echoed,
      { role: "tool", tool_call_id: echoed.tool_calls![0].id, content: JSON.stringify({ order_id: "C-3", status: "shipped" }) },
    ];
    await recorded({ model, tools, messages: replayMessages });
    const replay2 = await client.chat.completions.create({ model, tools: tools as OpenAI.ChatCompletionTool[], messages: replayMessages }).withResponse();
    expect(replay2.response.headers.get("muscle-mem-cache")).toBe("hit");
    expect(replay2.data.choices[0].message.content).toBe(turn2.content);
    expect(await generations(model)).toBe(2);
  });

  it("Should make one generation for many identical concurrent misses (single flight)", async () => {
    const model = uniqueModel("flight");
    const body = ask(model);
    const responses = await oneFlight(20, () => chat(body));
    const outcomes = responses.map((r) => r.headers.get("muscle-mem-cache"));
    const payloads = (await Promise.all(responses.map((r) => r.json()))) as OpenAI.ChatCompletion[];
    expect(await generations(model)).toBe(1);
    expect(outcomes.filter((o) => o === "miss")).toHaveLength(1);
    expect(outcomes.filter((o) => o === "hit")).toHaveLength(19);
    for (const p of payloads) {
      const call = p.choices[0].message.tool_calls?.[0];
      expect(call?.type === "function" && call.function.arguments).toBe('{"order_id":"A-1"}');
    }
  });

  it("Should count hits and tokens saved per tree", async () => {
    const model = uniqueModel();
    // Each request's counter flush runs in its waitUntil (COUNTER_FLUSH_MS and TALLY_FLUSH_MS are 0 in tests): once settled, the counts are in D1.
    await settled(async () => {
      await (await chat(ask(model))).arrayBuffer();
      await recorded(ask(model));
      for (let i = 0; i < 3; i++) await (await chat(ask(model))).arrayBuffer();
    });
    const row = await env.DB.prepare("SELECT hits, misses, prompt_tokens_saved FROM trees WHERE model = ?")
      .bind(model)
      .first<{ hits: number; misses: number; prompt_tokens_saved: number }>();
    // 3 hits plus the one `recorded` made with only-if-cached.
    expect(row?.hits).toBe(4);
    expect(row?.misses).toBe(1);
    expect(row?.prompt_tokens_saved).toBeGreaterThan(0);
  });
});

/** The message a client assembles from a streamed hit (content, refusal, tool and function calls). */
async function streamedMessage(res: Response): Promise<Record<string, unknown>> {
  const assembler = new SseAssembler();
  assembler.feed(new Uint8Array(await res.arrayBuffer()));
  const result = assembler.result();
  if (!result) throw new Error("the streamed hit did not assemble");
  return result.message as unknown as Record<string, unknown>;
}

/** A JSON hit's message, and the message a streamed hit assembles to. */
async function hitsOf(body: Record<string, unknown>): Promise<{ json: Record<string, unknown>; finish: string; streamed: Record<string, unknown> }> {
  await recorded(body);
  const res = await chat(body);
  expect(res.headers.get("muscle-mem-cache")).toBe("hit");
  const json = (await res.json()) as { choices: Array<{ message: Record<string, unknown>; finish_reason: string }> };
  const streamRes = await chat({ ...body, stream: true });
  expect(streamRes.headers.get("muscle-mem-cache")).toBe("hit");
  return { json: json.choices[0].message, finish: json.choices[0].finish_reason, streamed: await streamedMessage(streamRes) };
}

describe("a hit returns the recorded message as the model sent it, ids aside", () => {
  const fnCall = { name: "lookup_order", arguments: '{"order_id": "A-1", "amount": 12345678901234567893}' };

  it("Should store and replay a legacy function_call answer, JSON and streamed", async () => {
    const body = {
      model: uniqueModel("fn"),
      functions: [{ name: "lookup_order", parameters: { type: "object" } }],
      messages: [{ role: "user", content: "order A-1" }],
    };
    const miss = await withUpstream(
      { json: completion({ role: "assistant", content: null, function_call: fnCall, refusal: null, annotations: [] }, "function_call") },
      () => chat(body),
    );
    expect(miss.headers.get("muscle-mem-cache")).toBe("miss");
    await miss.arrayBuffer();
    const { json, finish, streamed } = await hitsOf(body);
    expect(finish).toBe("function_call");
    expect(json).toEqual({ role: "assistant", content: null, function_call: fnCall, refusal: null, annotations: [] });
    expect(streamed.function_call).toEqual(fnCall);
  });

  it("Should record a streamed function_call (delta.function_call) and replay it", async () => {
    const body = { model: uniqueModel("fn"), stream: true, messages: [{ role: "user", content: "order A-2" }] };
    const deltas = [
      { role: "assistant", content: null, function_call: { name: "lookup_order", arguments: "" } },
      { function_call: { arguments: '{"order_id": ' } },
      { function_call: { arguments: '"A-2"}' } },
    ];
    const miss = await withUpstream({ sse: chunks(deltas, "function_call") }, () => chat(body));
    await miss.arrayBuffer();
    const { json } = await hitsOf({ ...body, stream: false });
    expect(json.function_call).toEqual({ name: "lookup_order", arguments: '{"order_id": "A-2"}' });
    expect(json.content).toBeNull();
  });

  it('Should replay content "" as "" and add no refusal or annotations the model did not send', async () => {
    const call = { id: "call_x", type: "function", function: { name: "get_order", arguments: '{"order_id":"A-3"}' } };
    const body = { model: uniqueModel("empty"), tools, messages: [{ role: "user", content: "order A-3" }] };
    const miss = await withUpstream({ json: completion({ role: "assistant", content: "", tool_calls: [call] }, "tool_calls") }, () => chat(body));
    await miss.arrayBuffer();
    const { json, streamed } = await hitsOf(body);
    expect(json.content).toBe("");
    expect(json).not.toHaveProperty("refusal");
    expect(json).not.toHaveProperty("annotations");
    expect(streamed.content).toBe("");
  });

  it("Should replay fields the cache does not read (reasoning_content), and key them in the history", async () => {
    const body = { model: uniqueModel("reason"), messages: [{ role: "user", content: "why?" }] };
    const miss = await withUpstream({ json: completion({ role: "assistant", content: "because", reasoning_content: "I thought" }) }, () => chat(body));
    await miss.arrayBuffer();
    const { json, streamed } = await hitsOf(body);
    expect(json).toEqual({ role: "assistant", content: "because", reasoning_content: "I thought" });
    expect(streamed.reasoning_content).toBe("I thought");
  });

  it('Should serve an imported answer as it was logged: content "" and a legacy function_call', async () => {
    const model = uniqueModel("imported");
    const call = { id: "call_1", type: "function", function: { name: "get_order", arguments: '{"order_id": "A-9"}' } };
    const line = {
      model,
      messages: [
        { role: "user", content: "order A-9" },
        { role: "assistant", content: "", tool_calls: [call] },
        { role: "tool", tool_call_id: "call_1", content: "shipped" },
        { role: "assistant", content: null, function_call: { name: "notify", arguments: '{"to": "ada"}' } },
      ],
    };
    const res = await exports.default.fetch(
      new Request(`http://mm.test/api/import?tenant=${tenantOf("Bearer sk-test-default")}`, {
        method: "POST",
        headers: { authorization: "Bearer test-admin-token" },
        body: JSON.stringify(line),
      }),
    );
    expect(res.status).toBe(200);
    const first = await chat({ model, messages: line.messages.slice(0, 1) });
    expect(first.headers.get("muscle-mem-cache")).toBe("hit");
    const message = ((await first.json()) as { choices: Array<{ message: Record<string, unknown> }> }).choices[0].message;
    expect(message.content).toBe("");
    expect((message.tool_calls as Array<{ function: unknown }>)[0].function).toEqual(call.function);
    const second = await chat({ model, messages: line.messages.slice(0, 3) });
    const json = (await second.json()) as { choices: Array<{ message: Record<string, unknown>; finish_reason: string }> };
    expect(json.choices[0].message.function_call).toEqual({ name: "notify", arguments: '{"to": "ada"}' });
    expect(json.choices[0].finish_reason).toBe("function_call");
  });
});
