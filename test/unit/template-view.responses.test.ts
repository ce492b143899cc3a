import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../src/core/canonical";
import { childHash } from "../../src/core/hash";
import type { CanonicalMessage } from "../../src/core/messages";
import { chatViewOf } from "../../src/cache/templates/view";
import type { InputItem } from "../../src/providers/responses/schema";
import { STRUCTURE, responsesTemplateView as view } from "../../src/providers/responses/template-view";
import { anyText } from "./templates.support";
import { answerOf, callOutput, expectDistinctViews, expectRoundTrip, keyOf, nodesOf, textOutput } from "./template-view.responses.support";

const ORDER_TEXT = "Please refund order A-1001, my email is ada@example.com.";

/** Every step of a keyed path: the view round-trips, and the view's hash form is what the step was hashed from. */
function expectPathViews(input: Parameters<typeof keyOf>[0]): CanonicalMessage[] {
  const key = keyOf(input);
  return nodesOf(key).map((node, i) => {
    expect(childHash(key.path[i].parent, canonicalJson(view.hashForm(node)))).toBe(key.path[i].hash);
    expect(chatViewOf(view, view.hashForm(node))).not.toBeNull();
    return expectRoundTrip(node);
  });
}

/** A recorded answer: the view round-trips, and the view's hash form is what the answer node was hashed from. */
function expectAnswerView(output: unknown[], extra: Record<string, unknown> = {}, input: Parameters<typeof keyOf>[0] = ORDER_TEXT): CanonicalMessage {
  const key = keyOf(input);
  const { hash, message } = answerOf(key, output, extra);
  expect(childHash(key.key, canonicalJson(view.hashForm(message)))).toBe(hash);
  expect(chatViewOf(view, view.hashForm(message))).not.toBeNull();
  return expectRoundTrip(message);
}

describe("responsesTemplateView: one chat message per stored Responses node, and back", () => {
  it("Should read a user message as chat's, its texts in content (a list, empty for no text), the node's kind in STRUCTURE", () => {
    expect(expectPathViews(ORDER_TEXT)).toEqual([{ role: "user", content: [ORDER_TEXT], [STRUCTURE]: { kind: "message", fields: {} } }]);
    expect(expectPathViews("")).toEqual([{ role: "user", content: [], [STRUCTURE]: { kind: "message", fields: {} } }]);
    const views = expectPathViews([
      { role: "developer", content: [{ type: "input_text", text: "Be brief." }] },
      { role: "system", content: "Refunds only." },
      {
        type: "message",
        role: "user",
        content: [
          { type: "input_text", text: "Order " },
          { type: "input_text", text: "A-1" },
        ],
        x_tag: "k",
      },
    ]);
    expect(views.map((v) => [v.role, v.content])).toEqual([
      ["developer", ["Be brief."]],
      ["system", ["Refunds only."]],
      ["user", ["Order ", "A-1"]],
    ]);
    expect(views[2][STRUCTURE]).toEqual({ kind: "message", fields: { x_tag: "k" } });
  });

  it("Should read an echoed run as one assistant message, a function_call_output as a tool message, additional_tools as a textless system one", () => {
    const reasoning = { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "Look it up." }], encrypted_content: "gAAA", status: null };
    const views = expectPathViews([
      { role: "user", content: ORDER_TEXT },
      reasoning,
      { type: "function_call", id: "fc_1", call_id: "call_up", name: "get_order", arguments: '{"order_id": "A-1001"}' },
      { type: "custom_tool_call", call_id: "call_cu", name: "shell", input: "grep A-1001 orders.csv" },
      { type: "function_call_output", call_id: "call_up", output: '{"order_id":"A-1001","email":"ada@example.com"}' },
      { type: "custom_tool_call_output", call_id: "call_cu", output: [{ type: "input_text", text: "A-1001,delivered" }] },
      { type: "additional_tools", tools: [{ type: "function", name: "escalate", parameters: {} }] },
      { type: "message", role: "assistant", content: [{ type: "output_text", text: "Found it." }] },
    ]);
    expect(views.map((v) => v.role)).toEqual(["user", "assistant", "tool", "tool", "system", "assistant"]);
    expect(views[1]).toEqual({
      role: "assistant",
      content: ["grep A-1001 orders.csv"],
      tool_calls: [{ id: "call_0", type: "function", function: { name: "get_order", arguments: '{"order_id": "A-1001"}' } }],
      [STRUCTURE]: {
        kind: "output",
        items: [reasoning, { type: "function_call" }, { type: "custom_tool_call", call_id: "call_1", name: "shell" }],
        fields: {},
      },
    });
    expect(views[2]).toEqual({
      role: "tool",
      tool_call_id: "call_0",
      content: ['{"order_id":"A-1001","email":"ada@example.com"}'],
      [STRUCTURE]: { kind: "tool", output: "text", fields: {} },
    });
    expect(views[3]).toMatchObject({ content: ["A-1001,delivered"], [STRUCTURE]: { kind: "tool", output: "parts", fields: { custom: true } } });
    expect(views[4]).toMatchObject({ content: [], [STRUCTURE]: { kind: "tools" } });
    expect(views[5]).toMatchObject({ content: ["Found it."], [STRUCTURE]: { items: [{ type: "message", content: ["text"] }] } });
  });

  it("Should read an answer's function call with its arguments as the model wrote them", () => {
    const args = '{"order_id": "A-1001", "email": "ada@example.com"}';
    expect(expectAnswerView([callOutput("call_up", "get_order", args)])).toEqual({
      role: "assistant",
      content: [],
      tool_calls: [{ id: "call_0", type: "function", function: { name: "get_order", arguments: args } }],
      [STRUCTURE]: { kind: "output", items: [{ type: "function_call" }], fields: {} },
    });
  });

  it("Should keep every kind of answer: texts and refusals, an empty text part, reasoning with its status and nulls, several items", () => {
    const refusal = {
      type: "message",
      role: "assistant",
      content: [
        { type: "output_text", text: "No:" },
        { type: "refusal", refusal: "I can't." },
      ],
    };
    expect(expectAnswerView([refusal]).content).toEqual(["No:", "I can't."]);
    expect(expectAnswerView([textOutput("", "Done.")]).content).toEqual(["", "Done."]);
    const reasoning = { type: "reasoning", id: "rs_2", summary: [], encrypted_content: "gBBB", status: "completed", content: null };
    const several = expectAnswerView([
      reasoning,
      textOutput("Refunding A-1001."),
      callOutput("call_a", "refund", '{"order_id":"A-1001","amount":19.90}'),
      { type: "custom_tool_call", id: "ctc_1", status: "completed", call_id: "call_b", name: "note", input: "A-1001 refunded" },
    ]);
    expect(several.content).toEqual(["Refunding A-1001.", "A-1001 refunded"]);
    expect(several.tool_calls?.map((c) => c.function.arguments)).toEqual(['{"order_id":"A-1001","amount":19.90}']);
  });

  it("Should leave an answer's envelope out of its view and its hash form, and read no view that carries one", () => {
    const key = keyOf(ORDER_TEXT);
    const { message } = answerOf(key, [textOutput("Done.")], { service_tier: "default", temperature: 0.5 });
    expect(message["muscle-mem:response"]).toEqual({ service_tier: "default", temperature: 0.5 });
    const chat = expectAnswerView([textOutput("Done.")], { service_tier: "default", temperature: 0.5 });
    expect(Object.keys(chat).sort()).toEqual(["content", STRUCTURE, "role"]);
    expect(view.toChat(message)).toEqual(chat);
    expect(view.fromChat({ ...chat, "muscle-mem:response": { service_tier: "default" } })).toBeNull();
  });

  it("Should give no view to another API's message, and no message for a view that is none of this API's", () => {
    expect(chatViewOf(view, { role: "user", parts: [{ text: "hi" }] })).toBeNull();
    expect(chatViewOf(view, { role: "assistant", content: "hi" })).toBeNull();
    expect(chatViewOf(view, { role: "assistant", items: [{ type: "web_search_call", id: "ws_1" }] })).toBeNull();
    expect(chatViewOf(view, { role: "user", content: [{ type: "image", source: {} }] })).toBeNull();
    expect(view.fromChat({ role: "assistant", content: "hi" })).toBeNull();
    const chat = expectAnswerView([callOutput("call_up", "get_order", "{}")]);
    expect(view.fromChat({ ...chat, tool_calls: [] })).toBeNull();
    expect(view.fromChat({ ...chat, content: ["extra text"] })).toBeNull();
    expect(view.fromChat({ ...chat, name: "bot" })).toBeNull();
  });

  it("Should round-trip any answer the adapter records (property)", () => {
    const part = fc.oneof(
      anyText.map((text) => ({ type: "output_text", text, annotations: [] })),
      anyText.map((refusal) => ({ type: "refusal", refusal })),
    );
    const args = fc.oneof(fc.constantFrom("{}", '{"qty":1.0}', '{"qty": 1}', '{"b":1,"a":[2, 3.50]}', "not json"), anyText);
    const item = fc.oneof(
      fc.array(part, { maxLength: 3 }).map((content) => ({ type: "message", role: "assistant", content })),
      fc.tuple(fc.constantFrom("get_order", "refund"), args).map(([name, a]) => ({ type: "function_call", name, arguments: a })),
      anyText.map((input) => ({ type: "custom_tool_call", name: "shell", input })),
      fc.record({ text: anyText, enc: fc.option(fc.string()), done: fc.boolean() }).map(({ text, enc, done }) => ({
        type: "reasoning",
        id: "rs_9",
        summary: [{ type: "summary_text", text }],
        encrypted_content: enc,
        ...(done ? { status: "completed" } : {}),
      })),
    );
    fc.assert(
      fc.property(fc.array(item, { minLength: 1, maxLength: 4 }), (items) => {
        const output = items.map((it, i) => (it.type === "function_call" || it.type === "custom_tool_call" ? { ...it, call_id: `call_up${i}` } : it));
        expectAnswerView(output);
      }),
      { numRuns: 150 },
    );
  });

  it("Should round-trip every node of any input the adapter keys, its hash form the step's (property)", () => {
    const text = fc.oneof(
      anyText,
      fc.array(anyText, { minLength: 1, maxLength: 2 }).map((ts) => ts.map((t) => ({ type: "input_text", text: t }))),
    );
    const step = fc.oneof(
      fc.tuple(fc.constantFrom("user", "developer", "system"), text).map(([role, content]) => [{ role, content }]),
      fc.tuple(fc.constantFrom('{"order_id": "A-1"}', '{"qty":1.0}', "{}"), fc.oneof(anyText, text)).map(([args, output]) => [
        { type: "function_call", call_id: "c", name: "get_order", arguments: args },
        { type: "function_call_output", call_id: "c", output },
      ]),
      anyText.map((t) => [{ type: "message", role: "assistant", content: [{ type: "output_text", text: t }] }]),
      anyText.map((t) => [{ type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: t }], encrypted_content: null }]),
    );
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 4 }), (steps) => {
        // Each call gets its own id (its output answers it).
        const input = steps.flatMap((items, i) => items.map((item) => ("call_id" in item ? { ...item, call_id: `call_up${i}` } : item)));
        expectPathViews(input as InputItem[]);
      }),
      { numRuns: 150 },
    );
  });
});

describe("responsesTemplateView: two messages the model reads differently never share a view", () => {
  const user = (content: unknown, extra: Record<string, unknown> = {}) => nodesOf(keyOf([{ role: "user", content, ...extra }]))[0];
  const answer = (...output: unknown[]) => answerOf(keyOf(ORDER_TEXT), output).message;
  const path = (input: Parameters<typeof keyOf>[0]) => nodesOf(keyOf(input));
  const call = callOutput("call_up", "get_order", '{"order_id":"A-1001"}');

  it("Should tell roles, a text moved between parts, an extra field and an empty text apart", () => {
    const text = [{ type: "input_text", text: ORDER_TEXT }];
    expectDistinctViews(user(text), nodesOf(keyOf([{ role: "developer", content: text }]))[0]);
    expectDistinctViews(user(text), nodesOf(keyOf([{ role: "system", content: text }]))[0]);
    const split = (at: number) => [
      { type: "input_text", text: ORDER_TEXT.slice(0, at) },
      { type: "input_text", text: ORDER_TEXT.slice(at) },
    ];
    expectDistinctViews(user(split(10)), user(split(20)));
    expectDistinctViews(user(text), user(text, { x_tag: "k" }));
    expectDistinctViews(answer(textOutput("", "Done.")), answer(textOutput("Done.")));
    expectDistinctViews(answer(textOutput("A", "B")), answer(textOutput("A"), textOutput("B")));
  });

  it("Should tell item order, item kinds, a text from a refusal, a call from a custom call apart", () => {
    expectDistinctViews(answer(textOutput("Looking."), call), answer(call, textOutput("Looking.")));
    const refusal = { type: "message", role: "assistant", content: [{ type: "refusal", refusal: "Done." }] };
    expectDistinctViews(answer(textOutput("Done.")), answer(refusal));
    const custom = { type: "custom_tool_call", call_id: "call_up", name: "get_order", input: '{"order_id":"A-1001"}' };
    expectDistinctViews(answer(call), answer(custom));
    expectDistinctViews(answer(textOutput('{"order_id":"A-1001"}')), answer(custom));
  });

  it("Should tell arguments written 1.0 from 1, spaced from compact, and extra fields of a call apart", () => {
    expectDistinctViews(answer(callOutput("c", "refund", '{"qty":1.0}')), answer(callOutput("c", "refund", '{"qty":1}')));
    expectDistinctViews(answer(callOutput("c", "refund", '{"qty": 1}')), answer(callOutput("c", "refund", '{"qty":1}')));
    expectDistinctViews(answer(call), answer({ ...call, namespace: "orders" }));
  });

  it("Should tell reasoning items apart by id, summary, encrypted content and status", () => {
    const rs = { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "Look A-1001 up." }], encrypted_content: "gAAA" };
    expectDistinctViews(answer(rs, call), answer({ ...rs, id: "rs_2" }, call));
    expectDistinctViews(answer(rs, call), answer({ ...rs, summary: [{ type: "summary_text", text: "Look B-2 up." }] }, call));
    expectDistinctViews(answer(rs, call), answer({ ...rs, encrypted_content: "gBBB" }, call));
    expectDistinctViews(answer(rs, call), answer({ ...rs, status: "completed" }, call));
    expectDistinctViews(answer(call), answer(rs, call));
  });

  it("Should tell tool outputs apart by form and kind, call ids, and tools from a textless system message", () => {
    const run = (output: unknown, type = "function_call_output", callType = "function_call") => [
      { role: "user", content: ORDER_TEXT },
      callType === "function_call" ? call : { type: "custom_tool_call", call_id: "call_up", name: "get_order", input: "A-1001" },
      { type, call_id: "call_up", output },
    ];
    expectDistinctViews(path(run("A-1001"))[2], path(run([{ type: "input_text", text: "A-1001" }]))[2]);
    expectDistinctViews(path(run("A-1001"))[2], path(run("A-1001", "custom_tool_call_output", "custom"))[2]);
    const two = path([
      { role: "user", content: ORDER_TEXT },
      call,
      { ...call, call_id: "call_up2" },
      { type: "function_call_output", call_id: "call_up", output: "x" },
      { type: "function_call_output", call_id: "call_up2", output: "x" },
    ]);
    expectDistinctViews(two[2], two[3]);
    expectDistinctViews(path([{ role: "system", content: "" }])[0], path([{ type: "additional_tools", tools: [] }])[0]);
  });
});
