import { describe, expect, it } from "vitest";
import { refundDesk } from "../../tools/eval-workflows/refund";
import {
  anthropicAnswerOf,
  anthropicHeaders,
  anthropicReplyOf,
  anthropicRequest,
  anthropicShape,
  chatOfAnthropicAnswer,
  chatOfAnthropicRequest,
} from "../../tools/eval-workflows/apis/anthropic";
import { ANSWER, lookedUp, withoutIds } from "./eval-apis.support";

/** `npm run eval:templates -- --api anthropic`: the chat requests and answers through Messages' shape and back. */
describe("eval on Anthropic Messages: translations", () => {
  it("Should give the script the very chat body the harness built (a tool call and its result included)", () => {
    const body = lookedUp();
    const { path, body: sent } = anthropicRequest(body);
    expect(path).toBe("/v1/messages");
    expect(sent.system).toBe(refundDesk.system);
    expect(sent.messages.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
    expect(sent.messages[2].content).toEqual([{ type: "tool_result", tool_use_id: "call_x1", content: body.messages[3].content }]);
    expect(sent.tools?.[0]).toEqual({
      name: "get_order",
      description: "Look up an order.",
      input_schema: (body.tools as Array<{ function: { parameters: unknown } }>)[0].function.parameters,
    });
    expect(chatOfAnthropicRequest(JSON.parse(JSON.stringify(sent)))).toEqual(body);
    // The script answers the same either side (its call ids are fresh).
    expect(withoutIds(refundDesk.script(chatOfAnthropicRequest(sent)))).toEqual(withoutIds(refundDesk.script(body)));
  });

  it("Should read the scripted model's answer back as the same chat message, ids kept", () => {
    const reply = anthropicReplyOf(ANSWER);
    if ("status" in reply) throw new Error("not an answer");
    const served = { id: "msg_1", type: "message", role: "assistant", content: reply.content, stop_reason: "tool_use" };
    expect(chatOfAnthropicAnswer(JSON.parse(JSON.stringify(served)))).toEqual(ANSWER);
    // Text only: no tool_calls.
    const said = anthropicReplyOf({ role: "assistant", content: "Done." });
    expect(chatOfAnthropicAnswer(said)).toEqual({ role: "assistant", content: "Done." });
  });

  it("Should put the results of one turn in one user message and send the key as x-api-key", () => {
    const body = lookedUp();
    body.messages.push({ role: "tool", tool_call_id: "call_x2", content: '{"ok":true}' });
    const sent = anthropicRequest(body).body;
    expect(sent.messages).toHaveLength(3);
    expect(sent.messages[2].content).toHaveLength(2);
    expect(anthropicHeaders({ authorization: "Bearer sk-eval-1", "muscle-mem-namespace": "n" })).toEqual({
      "x-api-key": "sk-eval-1",
      "anthropic-version": "2023-06-01",
      "muscle-mem-namespace": "n",
    });
  });

  it("Should tell an answer in another block structure from the model's, ids aside", () => {
    const reply = anthropicReplyOf(ANSWER);
    if ("status" in reply) throw new Error("not an answer");
    const expected = anthropicShape(anthropicAnswerOf(ANSWER));
    const fresh = reply.content.map((b) => (b.type === "tool_use" ? { ...b, id: "toolu_other" } : b));
    expect(anthropicShape({ id: "msg_2", content: fresh })).toEqual(expected);
    // The same text in two blocks, or an input's keys in another order, reads back as the same chat message but is another form.
    const split = [{ type: "text", text: "Refunding " }, { type: "text", text: "now." }, ...reply.content.slice(1)];
    expect(chatOfAnthropicAnswer({ content: split })).toEqual(ANSWER);
    expect(anthropicShape({ content: split })).not.toEqual(expected);
    const reordered = reply.content.map((b) =>
      b.type === "tool_use" && b.name === "refund" ? { ...b, input: { email: "ada@example.com", order_id: "A-4242", amount_cents: 1999 } } : b,
    );
    expect(anthropicShape({ content: reordered })).not.toEqual(expected);
  });
});
