import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../src/core/canonical";
import { childHash } from "../../src/core/hash";
import type { CanonicalMessage } from "../../src/core/messages";
import { compose, decompose } from "../../src/cache/templates/leaves";
import { apiMessageOf, chatViewOf } from "../../src/cache/templates/view";
import { renderMessageText } from "../../src/providers/anthropic/render";
import type { AnthropicCanonicalMessage } from "../../src/providers/anthropic/schema";
import { answered, hashJson, keyed, pathOf, view, viewOf } from "./template-view.anthropic.support";

/** A conversation with every block the canonical form keys: texts, calls, several results, is_error, thinking, a system turn, extra fields. */
const CONVERSATION = [
  { role: "user", content: "Refund orders A-1 and B-2, email ada@example.com." },
  {
    role: "assistant",
    content: [
      { type: "thinking", thinking: "Two orders.", signature: "sig-1" },
      { type: "text", text: "Looking both up." },
      { type: "tool_use", id: "toolu_x", name: "get_order", input: { order_id: "A-1" } },
      { type: "text", text: "and" },
      { type: "tool_use", id: "toolu_y", name: "get_order", input: { order_id: "B-2" }, caller: { type: "code_execution_20250825", tool_id: "srvtoolu_1" } },
      { type: "redacted_thinking", data: "EmwKAh" },
    ],
  },
  {
    role: "user",
    content: [
      { type: "tool_result", tool_use_id: "toolu_y", content: [{ type: "text", text: "B-2: lost" }], is_error: true },
      {
        type: "tool_result",
        tool_use_id: "toolu_x",
        content: [
          { type: "text", text: "A-1" },
          { type: "text", text: "delivered, 19.99" },
        ],
      },
      { type: "tool_result", tool_use_id: "toolu_x", content: [] },
      { type: "text", text: "Go ahead.", citations: [{ type: "char_location", cited_text: "A-1" }], cache_control: { type: "ephemeral" } },
    ],
  },
  { role: "system", content: "Be brief.", priority: "high" },
];

/** An answer with every block a node stores: an empty text, a null field, a call written with spacing and `1.0`, a direct caller, thinking. */
function richAnswer() {
  const key = keyed(CONVERSATION);
  const content = [
    { type: "thinking", thinking: "Refund A-1.", signature: "sig-2" },
    { type: "text", text: "" },
    { type: "text", text: "Refunding A-1 to ada@example.com.", citations: null },
    { type: "tool_use", id: "toolu_model", name: "refund", input: { order_id: "A-1", qty: 1 }, caller: { type: "direct" } },
    { type: "redacted_thinking", data: "Zm9v" },
  ];
  return { key, answer: answered(key, content, ['{"order_id": "A-1", "qty": 1.0}']) };
}

describe("the Anthropic view reads every stored message as chat's and gives it back", () => {
  it("Should view each path message one for one, texts in block order and calls as chat's, and give back its hash form", () => {
    const key = keyed(CONVERSATION);
    const views = pathOf(key).map(viewOf);
    expect(views.map((v) => [v.role, v.content])).toEqual([
      ["user", ["Refund orders A-1 and B-2, email ada@example.com."]],
      ["assistant", ["Looking both up.", "and"]],
      ["user", ["B-2: lost", "A-1", "delivered, 19.99", "Go ahead."]],
      ["system", ["Be brief."]],
    ]);
    expect(views[1].tool_calls).toEqual([
      { id: "toolu_0", type: "function", function: { name: "get_order", arguments: '{"order_id":"A-1"}' } },
      { id: "toolu_1", type: "function", function: { name: "get_order", arguments: '{"order_id":"B-2"}' } },
    ]);
    expect(views[2].anthropic_blocks).toEqual([
      { type: "tool_result", tool_use_id: "toolu_1", content: [{ type: "text" }], is_error: true },
      { type: "tool_result", tool_use_id: "toolu_0", content: [{ type: "text" }, { type: "text" }] },
      { type: "tool_result", tool_use_id: "toolu_0", content: [] },
      { type: "text", citations: [{ type: "char_location", cited_text: "A-1" }] },
    ]);
    expect(views[3].anthropic_message).toEqual({ priority: "high" });
    for (const [i, step] of key.path.entries()) {
      expect(hashJson(JSON.parse(step.json))).toBe(step.json);
      expect(hashJson(apiMessageOf(view, views[i]))).toBe(step.json);
    }
  });

  it("Should view a stored answer with the input as the model wrote it and give the stored answer back whole, hashed as the adapter hashed it", () => {
    const { key, answer } = richAnswer();
    const chat = viewOf(answer.message);
    expect(chat.content).toEqual(["", "Refunding A-1 to ada@example.com."]);
    expect(chat.tool_calls).toEqual([{ id: "toolu_2", type: "function", function: { name: "refund", arguments: '{"order_id": "A-1", "qty": 1.0}' } }]);
    expect(chat.anthropic_blocks).toEqual([
      { type: "thinking", thinking: "Refund A-1.", signature: "sig-2" },
      { type: "text" },
      { type: "text", citations: null },
      { type: "tool_use", caller: { type: "direct" } },
      { type: "redacted_thinking", data: "Zm9v" },
    ]);
    expect(apiMessageOf(view, chat)).toEqual(answer.message);
    expect(childHash(key.key, hashJson(answer.message))).toBe(answer.hash);
  });

  it("Should write a call's canonical input as its arguments when the answer kept no text, and serve that text back", () => {
    const key = keyed(CONVERSATION);
    const { message } = answered(key, [{ type: "tool_use", id: "toolu_m", name: "refund", input: { qty: 1, order_id: "A-1" } }]);
    const chat = viewOf(message);
    expect(chat).toEqual({
      role: "assistant",
      content: [],
      tool_calls: [{ id: "toolu_2", type: "function", function: { name: "refund", arguments: '{"order_id":"A-1","qty":1}' } }],
      anthropic_blocks: [{ type: "tool_use" }],
    });
    const back = apiMessageOf(view, chat) as AnthropicCanonicalMessage;
    expect(back.content[0]).toMatchObject({ input: { order_id: "A-1", qty: 1 }, input_json: '{"order_id":"A-1","qty":1}' });
    expect(hashJson(back)).toBe(hashJson(message));
  });

  it("Should view an empty answer as no texts and no calls", () => {
    const { message } = answered(keyed(CONVERSATION), []);
    expect(viewOf(message)).toEqual({ role: "assistant", content: [], anthropic_blocks: [] });
  });

  it("Should leave an answer's envelope out of the view and out of the hash form", () => {
    const { answer } = richAnswer();
    const stored = { ...answer.message, "muscle-mem:response": { usage: { service_tier: "standard" } }, "muscle-mem:delta": { top: {}, delta: {}, usage: {} } };
    const chat = viewOf(stored);
    expect(Object.keys(chat).filter((k) => k.startsWith("muscle-mem:"))).toEqual([]);
    expect(canonicalJson(chat)).toBe(canonicalJson(viewOf(answer.message)));
    expect(hashJson(stored)).toBe(hashJson(answer.message));
  });

  it("Should serve a view's call with the input text it carries (the answer node render.ts reads)", () => {
    const { answer } = richAnswer();
    const back = apiMessageOf(view, viewOf(answer.message)) as AnthropicCanonicalMessage;
    const text = renderMessageText(
      { hash: answer.hash, message: back, finishReason: "tool_use", promptTokens: 1, completionTokens: 1 },
      { id: "msg_1", model: "claude-x" },
    );
    expect(text).toContain('"input":{"order_id": "A-1", "qty": 1.0}');
  });
});

describe("the Anthropic view through templates", () => {
  /** What a template renders from a view's own skeleton and leaves. */
  const composed = (chat: CanonicalMessage) => {
    const { skeleton, leaves } = decompose(chat);
    return compose(
      skeleton,
      leaves.map((l) => l.value),
    );
  };

  it("Should give every message back from its view's skeleton and leaves", () => {
    const { answer } = richAnswer();
    const key = keyed(CONVERSATION);
    const empty = answered(key, []).message;
    for (const message of [...pathOf(key), answer.message, empty]) {
      const chat = viewOf(message);
      const again = composed(chat);
      expect(again).toEqual(chat);
      expect(again && hashJson(apiMessageOf(view, again))).toBe(hashJson(message));
    }
    expect(apiMessageOf(view, composed(viewOf(answer.message)) as CanonicalMessage)).toEqual(answer.message);
  });

  it("Should give a template's answer with new values back with those values, in the call's text and its input", () => {
    const { answer } = richAnswer();
    const { skeleton, leaves } = decompose(viewOf(answer.message));
    const values = leaves.map((l) => (l.value === "A-1" ? "C-33" : l.value === "ada@example.com" ? "cyd@example.net" : l.value));
    const rendered = compose(skeleton, values) as CanonicalMessage;
    const back = apiMessageOf(view, rendered) as AnthropicCanonicalMessage;
    expect(back.content[2]).toEqual({ type: "text", text: "Refunding C-33 to cyd@example.net.", citations: null });
    expect(back.content[3]).toMatchObject({ input: { order_id: "C-33", qty: 1 }, input_json: '{"order_id": "C-33", "qty": 1.0}' });
    expect(back.content[0]).toEqual(answer.message.content[0]);
  });
});

describe("fromChat reads only the views toChat writes", () => {
  const base = (): CanonicalMessage => viewOf(richAnswer().answer.message);
  const cases: Array<[string, (v: CanonicalMessage) => CanonicalMessage]> = [
    ["a chat field the view never has", (v) => ({ ...v, name: "ada" })],
    ["an envelope key", (v) => ({ ...v, "muscle-mem:response": {} })],
    ["a role the API does not key", (v) => ({ ...v, role: "tool" })],
    ["content as a string", (v) => ({ ...v, content: "Refunding A-1." })],
    ["content absent", ({ content: _c, ...v }) => v as CanonicalMessage],
    ["one text more than the blocks hold", (v) => ({ ...v, content: [...(v.content as string[]), "more"] })],
    ["one text fewer", (v) => ({ ...v, content: (v.content as string[]).slice(1) })],
    ["no calls for a tool_use block", ({ tool_calls: _t, ...v }) => v as CanonicalMessage],
    ["calls as an empty list", (v) => ({ ...v, tool_calls: [] })],
    ["a call with a field a block cannot carry", (v) => ({ ...v, tool_calls: v.tool_calls?.map((c) => ({ ...c, index: 0 })) })],
    ["arguments that are not JSON", (v) => ({ ...v, tool_calls: v.tool_calls?.map((c) => ({ ...c, function: { ...c.function, arguments: "{" } })) })],
    ["a structural text block holding a text", (v) => ({ ...v, anthropic_blocks: [{ type: "text", text: "x" }] })],
    ["a block type no node stores", (v) => ({ ...v, anthropic_blocks: [...(v.anthropic_blocks as unknown[]), { type: "image" }] })],
    ["message fields as an empty object", (v) => ({ ...v, anthropic_message: {} })],
    ["message fields naming the content", (v) => ({ ...v, anthropic_message: { content: [] } })],
  ];
  it.each(cases)("Should give no message for %s", (_name, change) => {
    expect(view.fromChat(base())).not.toBeNull();
    expect(view.fromChat(change(base()))).toBeNull();
  });

  it("Should give no view of what no node stores", () => {
    const bad = [
      null,
      "text",
      { role: "assistant", content: "text" },
      { role: "tool", content: [] },
      { role: "user", content: [{ type: "image", source: {} }] },
      { role: "assistant", content: [{ type: "tool_use", id: "toolu_0", name: "f" }] },
      { role: "assistant", content: [{ type: "tool_use", id: "toolu_0", name: "f", input: { a: 1 }, input_json: '{"a":2}' }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_0", content: "text" }] },
    ];
    for (const message of bad) expect(chatViewOf(view, message)).toBeNull();
  });
});
