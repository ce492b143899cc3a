import type Anthropic from "@anthropic-ai/sdk";
import { describe, expect, it } from "vitest";
import { generations, uniqueModel } from "./helpers";
import { anthropicClient, messageRecorded, postMessages, refundTools, sdkRecorded } from "./messages.support";
import { withUpstream, type StubReply } from "./upstream-stub";

const ask = (model: string, extra: Record<string, unknown> = {}) => ({
  model,
  max_tokens: 256,
  tools: refundTools,
  messages: [{ role: "user", content: "Refund order #A-1 please" }],
  ...extra,
});

type Order = { order_id: string; status: string; amount: number };

/** Runs the refund desk to the end with the SDK; the tools record their calls. */
async function runDesk(client: Anthropic, model: string, order: Order, stream: boolean) {
  const calls: Array<{ name: string; input: unknown }> = [];
  const messages: Anthropic.MessageParam[] = [{ role: "user", content: `Refund order #${order.order_id} please` }];
  let last: Anthropic.MessageCreateParamsNonStreaming | undefined;
  for (let turn = 0; turn < 5; turn++) {
    const params = { model, max_tokens: 256, tools: refundTools, messages: [...messages] };
    last = params;
    const reply = stream ? await client.messages.stream(params).finalMessage() : await client.messages.create(params);
    messages.push({ role: "assistant", content: reply.content });
    const uses = reply.content.filter((b): b is Anthropic.ToolUseBlock => b.type === "tool_use");
    if (uses.length === 0) return { calls, text: reply.content.map((b) => (b.type === "text" ? b.text : "")).join(""), last };
    const results: Anthropic.ToolResultBlockParam[] = uses.map((use) => {
      calls.push({ name: use.name, input: use.input });
      const result = use.name === "get_order" ? order : { order_id: order.order_id, refunded: true };
      return { type: "tool_result", tool_use_id: use.id, content: JSON.stringify(result) };
    });
    messages.push({ role: "user", content: results });
  }
  throw new Error("the desk did not finish");
}

describe("POST /v1/messages", { timeout: 30_000 }, () => {
  it("Should miss, record, then serve the same tool_use from the tree with a fresh id", async () => {
    const model = uniqueModel("a");
    const first = await postMessages(ask(model));
    expect(first.status).toBe(200);
    expect(first.headers.get("muscle-mem-cache")).toBe("miss");
    const missed = (await first.json()) as Anthropic.Message;
    await messageRecorded(ask(model));
    const second = await postMessages(ask(model));
    expect(second.headers.get("muscle-mem-cache")).toBe("hit");
    const hit = (await second.json()) as Anthropic.Message;
    expect(hit).toMatchObject({ type: "message", role: "assistant", model, stop_reason: "tool_use", stop_sequence: null });
    expect(hit.id).toMatch(/^msg_/);
    expect(hit.content).toHaveLength(2);
    expect(hit.content[0]).toEqual({ type: "text", text: "Let me look that order up." });
    const use = hit.content[1] as Anthropic.ToolUseBlock;
    expect({ name: use.name, input: use.input }).toEqual({ name: "get_order", input: { order_id: "A-1" } });
    expect(use.id).toMatch(/^toolu_/);
    expect(use.id).not.toBe((missed.content[1] as Anthropic.ToolUseBlock).id);
    expect(hit.usage.input_tokens).toBe(missed.usage.input_tokens);
    expect(await generations(model)).toBe(1);
  });

  it("Should replay a whole multi-turn tool run with identical tool effects, JSON then streamed", async () => {
    const model = uniqueModel("a");
    const outcomes: string[] = [];
    const client = anthropicClient("sk-ant-multi", outcomes);
    const order = { order_id: "A-7", status: "delivered", amount: 42 };
    const first = await runDesk(client, model, order, false);
    expect(first.calls).toEqual([
      { name: "get_order", input: { order_id: "A-7" } },
      { name: "refund", input: { order_id: "A-7", amount: 42 } },
    ]);
    expect(outcomes).toEqual(["miss", "miss", "miss"]);
    // The tree's writes are serialised, so once the last answer is recorded, all are.
    await sdkRecorded(client, first.last);
    outcomes.length = 0;
    const repeat = await runDesk(client, model, order, false);
    expect(outcomes).toEqual(["hit", "hit", "hit"]);
    expect(repeat.calls).toEqual(first.calls);
    expect(repeat.text).toBe("Done: order A-7 was refunded.");
    outcomes.length = 0;
    const streamed = await runDesk(client, model, order, true);
    expect(outcomes).toEqual(["hit", "hit", "hit"]);
    expect(streamed.calls).toEqual(first.calls);
    expect(streamed.text).toBe(first.text);
    expect(await generations(model)).toBe(3);
  });

  it("Should tee a streamed miss to the client, record it, and serve the event stream on a hit", async () => {
    const model = uniqueModel("a");
    const client = anthropicClient("sk-ant-stream");
    const body = { model, max_tokens: 256, tools: refundTools, messages: [{ role: "user" as const, content: "Refund order #A-2 please" }] };
    const missed = await client.messages.stream(body).finalMessage();
    expect(missed.content[1]).toMatchObject({ type: "tool_use", name: "get_order", input: { order_id: "A-2" } });
    await sdkRecorded(client, body);
    const res = await postMessages({ ...body, stream: true }, { key: "sk-ant-stream" });
    expect(res.headers.get("muscle-mem-cache")).toBe("hit");
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const text = await res.text();
    const types = [...text.matchAll(/^event: (\S+)$/gm)].map((m) => m[1]);
    expect(types).toEqual([
      "message_start",
      "ping",
      "content_block_start",
      "content_block_delta",
      "content_block_stop",
      "content_block_start",
      "content_block_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    expect(text).toContain('"type":"input_json_delta","partial_json":"{\\"order_id\\":\\"A-2\\"}"');
    const hit = await client.messages.stream(body).finalMessage();
    expect(hit.content.map((b) => (b.type === "tool_use" ? { name: b.name, input: b.input } : b))).toEqual([
      { type: "text", text: "Let me look that order up." },
      { name: "get_order", input: { order_id: "A-2" } },
    ]);
    expect(hit.stop_reason).toBe("tool_use");
    expect(await generations(model)).toBe(1);
  });

  it("Should key string content, text blocks, cache_control and system forms alike", async () => {
    const model = uniqueModel("a");
    await postMessages(ask(model, { system: "You are a refund desk." }), { key: "sk-ant-forms" });
    await messageRecorded(ask(model, { system: "You are a refund desk." }), { key: "sk-ant-forms" });
    const variant = ask(model, {
      system: [{ type: "text", text: "You are a refund desk.", cache_control: { type: "ephemeral" } }],
      tools: refundTools.map((t, i) => (i === 1 ? { ...t, cache_control: { type: "ephemeral" } } : t)),
      messages: [{ role: "user", content: [{ type: "text", text: "Refund order #A-1 please", cache_control: { type: "ephemeral" } }] }],
      metadata: { user_id: "u-1" },
    });
    const res = await postMessages(variant, { key: "sk-ant-forms" });
    expect(res.headers.get("muscle-mem-cache")).toBe("hit");
    expect(await generations(model)).toBe(1);
  });

  it("Should branch when a tool result changes", async () => {
    const model = uniqueModel("a");
    const outcomes: string[] = [];
    const client = anthropicClient("sk-ant-branch", outcomes);
    const first = await runDesk(client, model, { order_id: "A-3", status: "delivered", amount: 10 }, false);
    await sdkRecorded(client, first.last);
    outcomes.length = 0;
    const branch = await runDesk(client, model, { order_id: "A-3", status: "shipped", amount: 10 }, false);
    expect(outcomes).toEqual(["hit", "miss"]);
    expect(branch.calls).toEqual([{ name: "get_order", input: { order_id: "A-3" } }]);
    expect(branch.text).toBe("Order A-3 is shipped, so it cannot be refunded yet.");
    expect(await generations(model)).toBe(4);
  });

  it("Should give each key its own tenant and treat x-api-key and Authorization: Bearer of one key alike", async () => {
    const model = uniqueModel("a");
    await postMessages(ask(model), { key: "sk-ant-one" });
    await messageRecorded(ask(model), { key: "sk-ant-one" });
    const other = await postMessages(ask(model), { key: "sk-ant-two" });
    expect(other.headers.get("muscle-mem-cache")).toBe("miss");
    const bearer = await postMessages(ask(model), { key: "", headers: { authorization: "Bearer sk-ant-one" } });
    expect(bearer.headers.get("muscle-mem-cache")).toBe("hit");
  });
});

/** The tool inputs the stubbed model writes, turn by turn: key order and number text as a model might. */
const ECHO_INPUTS = ['{"zeta": 1, "alpha": "x", "mid": {"b": 2, "a": 1.5}}', '{"query":"again","limit":10,"after":"2024-01-01"}', '{"z":[3,2,1],"a":null}'];

/** A Messages answer for the echo agent: a tool_use on turns 1-3 (its input written exactly as ECHO_INPUTS), then text. */
function echoModel(body: Record<string, unknown>): StubReply {
  const turn = ((body.messages as unknown[]).length - 1) / 2;
  const input = ECHO_INPUTS[turn];
  const usage = { input_tokens: 10, output_tokens: 5 };
  if (!body.stream) {
    const content = input ? [{ type: "tool_use", id: `toolu_up${turn}`, name: "echo", input: JSON.parse(input) }] : [{ type: "text", text: "done" }];
    return {
      json: { id: "msg_up", type: "message", role: "assistant", model: "m", content, stop_reason: input ? "tool_use" : "end_turn", stop_sequence: null, usage },
    };
  }
  const events: unknown[] = [
    { type: "message_start", message: { id: "msg_up", type: "message", role: "assistant", model: "m", content: [], stop_reason: null, usage } },
  ];
  if (input) {
    events.push({ type: "content_block_start", index: 0, content_block: { type: "tool_use", id: `toolu_up${turn}`, name: "echo", input: {} } });
    for (let i = 0; i < input.length; i += 7)
      events.push({ type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: input.slice(i, i + 7) } });
  } else {
    events.push(
      { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
      { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "done" } },
    );
  }
  events.push(
    { type: "content_block_stop", index: 0 },
    { type: "message_delta", delta: { stop_reason: input ? "tool_use" : "end_turn", stop_sequence: null }, usage },
    { type: "message_stop" },
  );
  return { sse: events.map((e) => JSON.stringify(e)) };
}

describe("Anthropic replays keep the model's tool input", { timeout: 30_000 }, () => {
  /** Runs the 4-turn echo agent: its tool answers with the input text exactly as the client received it. */
  async function runEcho(model: string, stream: boolean): Promise<{ outcomes: string[]; results: string[] }> {
    const messages: unknown[] = [{ role: "user", content: "echo please" }];
    const outcomes: string[] = [];
    const results: string[] = [];
    for (let turn = 0; turn < 4; turn++) {
      const body = { model, max_tokens: 64, stream, tools: [{ name: "echo", input_schema: { type: "object" } }], messages: [...messages] };
      const res = await postMessages(body);
      outcomes.push(res.headers.get("muscle-mem-cache") ?? "");
      const text = await res.text();
      const content = stream ? streamedContent(text) : (JSON.parse(text) as { content: Array<Record<string, unknown>> }).content;
      messages.push({ role: "assistant", content });
      const use = content.find((b) => b.type === "tool_use");
      if (!use) break;
      const echoed = stream ? String(use.partial_json) : JSON.stringify(use.input);
      results.push(echoed);
      messages.push({ role: "user", content: [{ type: "tool_result", tool_use_id: use.id, content: echoed }] });
      if (outcomes.at(-1) === "miss") await messageRecorded(body);
    }
    return { outcomes, results };
  }

  /** The content blocks of a streamed answer; a tool_use keeps its partial_json text as the client received it. */
  function streamedContent(text: string): Array<Record<string, unknown>> {
    const blocks: Array<Record<string, unknown>> = [];
    for (const line of text.split("\n")) {
      if (!line.startsWith("data: ")) continue;
      const e = JSON.parse(line.slice(6)) as {
        type: string;
        index: number;
        content_block?: Record<string, unknown>;
        delta?: { type: string; text?: string; partial_json?: string };
      };
      if (e.type === "content_block_start") blocks[e.index] = { ...e.content_block, partial_json: "" };
      if (e.type === "content_block_delta" && e.delta?.type === "text_delta") blocks[e.index].text = String(blocks[e.index].text ?? "") + e.delta.text;
      if (e.type === "content_block_delta" && e.delta?.type === "input_json_delta")
        blocks[e.index].partial_json = String(blocks[e.index].partial_json) + e.delta.partial_json;
    }
    return blocks.map(({ partial_json, ...b }) => (b.type === "tool_use" ? { ...b, input: JSON.parse(String(partial_json) || "{}"), partial_json } : b));
  }

  for (const stream of [false, true]) {
    it(`Should repeat a 4-turn agent whose tool echoes its input with 0 misses (${stream ? "streamed" : "JSON"})`, async () => {
      const model = uniqueModel("echo-agent");
      const first = await withUpstream(echoModel, () => runEcho(model, stream));
      expect(first.outcomes).toEqual(["miss", "miss", "miss", "miss"]);
      const again = await withUpstream(echoModel, () => runEcho(model, stream));
      expect(again.outcomes).toEqual(["hit", "hit", "hit", "hit"]);
      expect(again.results).toEqual(first.results);
      // The model's text, byte for byte when streamed; its key order either way.
      if (stream) expect(again.results).toEqual(ECHO_INPUTS);
      else expect(again.results).toEqual(ECHO_INPUTS.map((i) => JSON.stringify(JSON.parse(i))));
    });
  }
});
