import { describe, expect, it } from "vitest";
import type { StoredAnswer } from "../../src/core/answer";
import { keyResponsesAnswer, keyResponsesRequest, type ResponsesKey } from "../../src/providers/responses/key";
import { renderResponse, renderResponseEvents, responsesAnswerOf } from "../../src/providers/responses/render";
import type { ResponsesRequest } from "../../src/providers/responses/schema";
import { ResponsesStreamReader } from "../../src/providers/responses/stream";
import { responsesUpstreamBody } from "../../src/providers/responses/upstream-body";

const scope = { tenant: "t", namespace: "default", maxMessageBytes: 900_000 };
const tools = [{ type: "function", name: "get_order", parameters: { type: "object", properties: { order_id: { type: "string" } } } }];

function keyOf(body: Partial<ResponsesRequest>): ResponsesKey {
  const keyed = keyResponsesRequest({ model: "gpt-x", input: "hi", ...body } as ResponsesRequest, scope);
  if (!keyed.ok) throw new Error(JSON.stringify(keyed));
  return keyed.key;
}

function outcome(body: Partial<ResponsesRequest>) {
  return keyResponsesRequest({ model: "gpt-x", input: "hi", ...body } as ResponsesRequest, scope);
}

const call = (callId: string, args: string, id = "fc_1") => ({
  type: "function_call",
  id,
  status: "completed",
  call_id: callId,
  name: "get_order",
  arguments: args,
});
const result = (callId: string, output: string) => ({ type: "function_call_output", call_id: callId, output });
const said = (text: string, id = "msg_1") => ({
  type: "message",
  id,
  status: "completed",
  role: "assistant",
  content: [{ type: "output_text", text, annotations: [], logprobs: [] }],
});

describe("Responses keying", () => {
  it("Should key a string input like the same text as one user message item", () => {
    expect(keyOf({ input: "hello" }).key).toBe(keyOf({ input: [{ role: "user", content: "hello" }] }).key);
    expect(keyOf({ input: "hello" }).key).toBe(keyOf({ input: [{ type: "message", role: "user", content: [{ type: "input_text", text: "hello" }] }] }).key);
  });

  it("Should ignore item ids, statuses and call ids (ordinals), and argument key order", () => {
    const a = keyOf({
      tools,
      input: [{ role: "user", content: "go" }, said("looking", "msg_a"), call("call_AAA", '{"order_id":"A-1","x":1}', "fc_a"), result("call_AAA", "ok")],
    });
    const b = keyOf({
      tools,
      input: [{ role: "user", content: "go" }, said("looking", "msg_b"), call("call_BBB", '{"x":1, "order_id":"A-1"}', "fc_b"), result("call_BBB", "ok")],
    });
    expect(a.key).toBe(b.key);
    expect(a.path).toHaveLength(3);
    expect(JSON.parse(a.path[1].json)).toEqual({
      role: "assistant",
      items: [
        { type: "message", content: [{ type: "text", text: "looking" }] },
        { type: "function_call", call_id: "call_0", name: "get_order", arguments: '{"order_id":"A-1","x":1}' },
      ],
    });
  });

  it("Should branch on a changed tool result, argument, instruction, tool or unknown parameter", () => {
    const base = { tools, input: [{ role: "user", content: "go" }, call("c1", '{"order_id":"A-1"}'), result("c1", "delivered")] };
    const key = keyOf(base).key;
    expect(keyOf({ ...base, input: [base.input[0], base.input[1], result("c1", "shipped")] }).key).not.toBe(key);
    expect(keyOf({ ...base, input: [base.input[0], call("c1", '{"order_id":"A-2"}'), base.input[2]] }).key).not.toBe(key);
    expect(keyOf({ ...base, instructions: "be brief" }).key).not.toBe(key);
    expect(keyOf({ ...base, tools: [] }).key).not.toBe(key);
    expect(keyOf({ ...base, temperature: 0 } as Partial<ResponsesRequest>).key).not.toBe(key);
    expect(keyOf({ ...base, some_future_knob: true } as Partial<ResponsesRequest>).key).not.toBe(key);
  });

  it("Should not key transport and bookkeeping fields (stream, metadata, user, store: false)", () => {
    const key = keyOf({}).key;
    expect(keyOf({ stream: true, metadata: { run: "1" }, user: "u", store: false, prompt_cache_key: "k" } as Partial<ResponsesRequest>).key).toBe(key);
  });

  it("Should keep Responses trees apart from other APIs' trees (the frame names the API)", () => {
    expect(keyOf({}).frameJson).toContain('"muscle-mem:api":"openai-responses"');
  });

  it("Should bypass server-side state and work: store true, background, previous_response_id, conversation, server tools, prompt, include", () => {
    expect(outcome({ store: true })).toEqual({ ok: false, bypass: "store: true" });
    expect(outcome({ background: true })).toEqual({ ok: false, bypass: "background" });
    expect(outcome({ previous_response_id: "resp_1" })).toEqual({ ok: false, bypass: "previous_response_id" });
    expect(outcome({ conversation: "conv_1" })).toEqual({ ok: false, bypass: "conversation" });
    expect(outcome({ tools: [{ type: "web_search" }] })).toEqual({ ok: false, bypass: "server-side tool web_search" });
    expect(outcome({ tools: [{ type: "file_search" }] })).toEqual({ ok: false, bypass: "server-side tool file_search" });
    expect(outcome({ prompt: { id: "pmpt_1" } })).toEqual({ ok: false, bypass: "stored prompt" });
    expect(outcome({ include: ["message.output_text.logprobs"] })).toEqual({ ok: false, bypass: "include" });
    expect(outcome({ include: ["reasoning.encrypted_content", "file_search_call.results"] })).toEqual({ ok: false, bypass: "include" });
  });

  it("Should key a request that includes reasoning's encrypted content (recorded and served), apart from one that does not", () => {
    const included = outcome({ include: ["reasoning.encrypted_content"] });
    expect(included.ok).toBe(true);
    expect(included.ok && included.key.frameJson).not.toBe(keyOf({}).frameJson);
  });

  it("Should key reasoning items sent back: their encrypted content, summary and id, not their status", () => {
    const first = (item: Record<string, unknown>) => keyOf({ input: [{ role: "user", content: "go" }, item, call("call_a", "{}"), result("call_a", "r")] }).key;
    const item = { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "s" }], encrypted_content: "gAAA1" };
    expect(first({ ...item, status: "completed" })).toBe(first(item));
    expect(first({ ...item, encrypted_content: "gAAA2" })).not.toBe(first(item));
    expect(first({ ...item, summary: [] })).not.toBe(first(item));
    expect(first({ ...item, id: "rs_2" })).not.toBe(first(item));
  });

  it("Should bypass images, item references and outputs whose call is not in the input", () => {
    expect(outcome({ input: [{ type: "item_reference", id: "rs_1" }] })).toEqual({ ok: false, bypass: "item_reference input item" });
    expect(outcome({ input: [{ role: "user", content: [{ type: "input_image", image_url: "http://x" }] }] })).toEqual({
      ok: false,
      bypass: "input_image content part",
    });
    expect(outcome({ input: [result("call_elsewhere", "x")] })).toEqual({ ok: false, bypass: "function_call_output without its function_call in the input" });
  });

  it("Should reject a function call without a call_id as bad input", () => {
    const keyed = outcome({
      input: [
        { role: "user", content: "go" },
        { type: "function_call", name: "f", arguments: "{}" },
      ],
    });
    expect(keyed).toMatchObject({ ok: false, invalid: { param: "input[1]" } });
  });
});

describe("Responses answers", () => {
  const key = keyOf({ tools, input: [{ role: "user", content: "go" }] });
  const output = [said("Let me look."), call("call_up", '{ "order_id" : "A-1" }')];

  it("Should key the answer as the node the echoed output walks to", () => {
    const answer = keyResponsesAnswer(key, output);
    const echoed = keyOf({ tools, input: [{ role: "user", content: "go" }, said("Let me look.", "msg_z"), call("call_zz", '{"order_id":"A-1"}', "fc_z")] });
    expect(answer?.hash).toBe(echoed.key);
  });

  it("Should record reasoning output as the model sent it, keyed as its echo walks, and not server-tool output", () => {
    const reasoning = { type: "reasoning", id: "rs", summary: [], encrypted_content: "gAAA", status: null };
    const answer = keyResponsesAnswer(key, [reasoning, ...output]);
    expect(answer && (JSON.parse(answer.json) as { items: unknown[] }).items[0]).toEqual(reasoning);
    const echoed = keyOf({
      tools,
      input: [
        { role: "user", content: "go" },
        { type: "reasoning", id: "rs", summary: [], encrypted_content: "gAAA" },
        said("Let me look.", "msg_z"),
        call("call_zz", '{"order_id":"A-1"}', "fc_z"),
      ],
    });
    expect(answer?.hash).toBe(echoed.key);
    expect(keyResponsesAnswer(key, [{ type: "web_search_call", id: "ws" }])).toBeNull();
    expect(keyResponsesAnswer(key, [])).toBeNull();
  });

  const stored = (): StoredAnswer => {
    const answer = keyResponsesAnswer(key, output);
    if (!answer) throw new Error("no answer");
    return {
      hash: answer.hash,
      message: JSON.parse(answer.json),
      observations: 1,
      finishReason: "completed",
      promptTokens: 10,
      completionTokens: 5,
      latencyMs: 3,
    };
  };

  it("Should render the recorded output exactly, arguments byte for byte, with fresh ids", () => {
    const answer = responsesAnswerOf(stored());
    if (!answer) throw new Error("not renderable");
    const response = renderResponse(answer, { model: "gpt-x", input: "go" }, { id: "resp_mm1", createdAt: 1 });
    expect(response).toMatchObject({
      id: "resp_mm1",
      object: "response",
      status: "completed",
      model: "gpt-x",
      usage: { input_tokens: 10, output_tokens: 5, total_tokens: 15 },
    });
    const items = response.output as Array<Record<string, unknown>>;
    expect(items[0]).toMatchObject({ type: "message", role: "assistant", content: [{ type: "output_text", text: "Let me look.", annotations: [] }] });
    expect(items[1]).toMatchObject({ type: "function_call", name: "get_order", arguments: '{ "order_id" : "A-1" }' });
    expect(items[1].call_id).toMatch(/^call_mm[0-9a-f]{24}1$/);
    expect(items[1].id).toMatch(/^fc_mm/);
  });

  it("Should render the event sequence a client assembles back into the same response", () => {
    const answer = responsesAnswerOf(stored());
    if (!answer) throw new Error("not renderable");
    const text = renderResponseEvents(answer, { model: "gpt-x", input: "go", stream: true }, { id: "resp_mm1", createdAt: 1 });
    const events = text
      .trim()
      .split("\n\n")
      .map((block) => JSON.parse(block.split("\n")[1].slice(6)) as { type: string; sequence_number: number; delta?: string });
    expect(events.map((e) => e.type)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.output_item.added",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.done",
      "response.output_item.done",
      "response.completed",
    ]);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    expect(events[9].delta).toBe('{ "order_id" : "A-1" }');
    const reader = new ResponsesStreamReader();
    reader.feed(new TextEncoder().encode(text));
    expect(keyResponsesAnswer(key, (reader.result() as { output: unknown[] }).output)?.hash).toBe(stored().hash);
  });

  it("Should not read a cut or failed stream as an answer", () => {
    const cut = new ResponsesStreamReader();
    cut.feed(new TextEncoder().encode('event: response.created\ndata: {"type":"response.created","response":{}}\n\n'));
    expect(cut.result()).toBeNull();
    const failed = new ResponsesStreamReader();
    failed.feed(
      new TextEncoder().encode('data: {"type":"response.failed"}\n\ndata: {"type":"response.completed","response":{"status":"completed","output":[]}}\n\n'),
    );
    expect(failed.result()).toBeNull();
  });

  it("Should refuse to render a node of another API", () => {
    expect(responsesAnswerOf({ ...stored(), message: { role: "assistant", content: "chat" } as unknown as StoredAnswer["message"] })).toBeNull();
  });
});

describe("Responses upstream body", () => {
  it("Should drop only the item ids a hit served before a miss goes upstream", () => {
    const input = [
      { role: "user", content: "go" },
      { ...said("x"), id: "msg_mmabc" },
      { ...call("c", "{}"), id: "fc_mmdef" },
      { ...said("y"), id: "msg_real" },
    ];
    const raw = JSON.stringify({ model: "m", input });
    const sent = JSON.parse(responsesUpstreamBody(raw, input)) as { input: Array<{ id?: string }> };
    expect(sent.input.map((i) => i.id)).toEqual([undefined, undefined, undefined, "msg_real"]);
    const untouched = JSON.stringify({ model: "m", input: [said("y")] });
    expect(responsesUpstreamBody(untouched, [said("y")])).toBe(untouched);
  });
});
