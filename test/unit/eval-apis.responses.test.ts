import { describe, expect, it } from "vitest";
import { refundDesk } from "../../tools/eval-workflows/refund";
import {
  chatOfResponsesAnswer,
  chatOfResponsesRequest,
  responsesAnswerOf,
  responsesReplyOf,
  responsesRequest,
  responsesShape,
} from "../../tools/eval-workflows/apis/responses";
import { ANSWER, lookedUp, withoutIds } from "./eval-apis.support";

/** `npm run eval:templates -- --api responses`: the chat requests and answers through Responses' shape and back. */
describe("eval on OpenAI Responses: translations", () => {
  it("Should give the script the very chat body the harness built (a tool call and its result included)", () => {
    const body = lookedUp();
    const { path, body: sent } = responsesRequest(body);
    expect(path).toBe("/v1/responses");
    expect(sent.instructions).toBe(refundDesk.system);
    // Stateless, as Codex sends it: a learned template's answer keeps nothing for previous_response_id with store: false.
    expect(sent.store).toBe(false);
    expect(sent.previous_response_id).toBeUndefined();
    expect(sent.input).toEqual([
      { role: "user", content: body.messages[1].content },
      { type: "message", role: "assistant", content: [{ type: "output_text", text: "Let me look that order up.", annotations: [] }] },
      { type: "function_call", call_id: "call_x1", name: "get_order", arguments: '{"order_id":"A-4242"}' },
      { type: "function_call_output", call_id: "call_x1", output: body.messages[3].content },
    ]);
    expect(sent.tools?.[0]).toMatchObject({ type: "function", name: "get_order", description: "Look up an order." });
    expect(chatOfResponsesRequest(JSON.parse(JSON.stringify(sent)))).toEqual(body);
    expect(withoutIds(refundDesk.script(chatOfResponsesRequest(sent)))).toEqual(withoutIds(refundDesk.script(body)));
  });

  it("Should read the scripted model's answer back as the same chat message (call ids are the answer's call_ids)", () => {
    const reply = responsesReplyOf(ANSWER);
    if ("status" in reply) throw new Error("not an answer");
    // As tools/scripted-responses-model.ts writes the output items: fresh ids and call_ids.
    const output = reply.output.map((o, i) =>
      "text" in o
        ? {
            id: `msg_${i}`,
            type: "message",
            status: "completed",
            role: "assistant",
            content: [{ type: "output_text", text: o.text, annotations: [], logprobs: [] }],
          }
        : { id: `fc_${i}`, type: "function_call", status: "completed", call_id: `call_new${i}`, name: o.call, arguments: JSON.stringify(o.args) },
    );
    const read = chatOfResponsesAnswer({ id: "resp_1", object: "response", status: "completed", output });
    expect(withoutIds(read)).toEqual(withoutIds(ANSWER));
    expect(read.tool_calls?.map((c) => c.id)).toEqual(["call_new1", "call_new2"]);
    // Its form, ids and statuses aside, is the form the scripted model gives; a call's arguments spelled otherwise are another.
    expect(responsesShape({ output })).toEqual(responsesShape(responsesAnswerOf(ANSWER)));
    const spaced = output.map((o) => (o.type === "function_call" ? { ...o, arguments: JSON.stringify(JSON.parse(String(o.arguments)), null, 1) } : o));
    expect(withoutIds(chatOfResponsesAnswer({ output: spaced }))).not.toEqual(withoutIds(ANSWER));
    expect(responsesShape({ output: spaced })).not.toEqual(responsesShape(responsesAnswerOf(ANSWER)));
    // A reasoning item is no part of the chat message; text only has no tool_calls.
    expect(chatOfResponsesAnswer({ output: [{ type: "reasoning", summary: [] }, output[0]] })).toEqual({ role: "assistant", content: "Refunding now." });
  });

  it("Should read consecutive assistant items as one chat turn upstream", () => {
    const body = lookedUp();
    body.messages.push(ANSWER);
    expect(chatOfResponsesRequest(responsesRequest(body).body).messages).toEqual(body.messages);
  });
});
