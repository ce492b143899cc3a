import { describe, expect, it } from "vitest";
import { anthropicView } from "../../src/providers/anthropic/view";
import { chatView } from "../../src/providers/chat/view";
import { geminiView } from "../../src/providers/gemini/view";
import type { NodeView } from "../../src/providers/node-view";
import { responsesView } from "../../src/providers/responses/view";

/** A view with its empty lists left out, for short expectations. */
const brief = (view: NodeView) => Object.fromEntries(Object.entries(view).filter(([, v]) => v.length > 0));

describe("each provider's view of its messages (the node API's `view`, which the dashboard shows)", () => {
  it("Should show chat text, tool calls with their arguments, tool results and refusals", () => {
    expect(brief(chatView({ role: "user", content: "Refund order #A-1" }))).toEqual({ texts: ["Refund order #A-1"] });
    expect(
      brief(
        chatView({
          role: "user",
          content: [
            { type: "text", text: "a" },
            { type: "text", text: "b" },
          ],
        }),
      ),
    ).toEqual({ texts: ["a", "b"] });
    const call = { id: "call_0", type: "function", function: { name: "get_order", arguments: '{"order_id":"A-1"}' } };
    expect(brief(chatView({ role: "assistant", content: null, tool_calls: [call] }))).toEqual({
      calls: [{ name: "get_order", id: "call_0", args: '{"order_id":"A-1"}' }],
    });
    expect(brief(chatView({ role: "tool", tool_call_id: "call_0", content: '{"status":"delivered"}' }))).toEqual({
      results: [{ id: "call_0", text: '{"status":"delivered"}' }],
    });
    expect(brief(chatView({ role: "assistant", content: null, refusal: "No." }))).toEqual({ refusals: ["No."] });
    expect(brief(chatView({ role: "assistant", content: null }))).toEqual({});
  });

  it("Should show Anthropic text, tool_use and tool_result blocks", () => {
    const answer = {
      role: "assistant",
      content: [
        { type: "text", text: "Looking." },
        { type: "tool_use", id: "toolu_0", name: "get_order", input: { order_id: "A-1" } },
      ],
    };
    expect(brief(anthropicView(answer))).toEqual({ texts: ["Looking."], calls: [{ name: "get_order", id: "toolu_0", args: '{"order_id":"A-1"}' }] });
    expect(brief(anthropicView({ role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_0", content: "delivered" }] }))).toEqual({
      results: [{ id: "toolu_0", text: "delivered" }],
    });
  });

  it("Should show Responses items: message text, function_call name and arguments, function_call_output", () => {
    const answer = {
      role: "assistant",
      items: [
        {
          type: "message",
          role: "assistant",
          content: [
            { type: "output_text", text: "On it.", annotations: [] },
            { type: "refusal", refusal: "Not that." },
          ],
        },
        { type: "function_call", call_id: "call_0", name: "get_order", arguments: '{"order_id":"A-1"}' },
      ],
    };
    expect(brief(responsesView(answer))).toEqual({
      texts: ["On it."],
      refusals: ["Not that."],
      calls: [{ name: "get_order", id: "call_0", args: '{"order_id":"A-1"}' }],
    });
    expect(brief(responsesView({ role: "user", items: [{ type: "message", role: "user", content: [{ type: "input_text", text: "Refund #A-1." }] }] }))).toEqual(
      {
        texts: ["Refund #A-1."],
      },
    );
    expect(brief(responsesView({ role: "tool", items: [{ type: "function_call_output", call_id: "call_0", output: '{"status":"delivered"}' }] }))).toEqual({
      results: [{ id: "call_0", text: '{"status":"delivered"}' }],
    });
  });

  it("Should show Gemini parts: text, functionCall name and args, functionResponse", () => {
    const answer = { role: "model", parts: [{ text: "Let me look." }, { functionCall: { name: "get_order", args: { order_id: "A-1" } } }] };
    expect(brief(geminiView(answer))).toEqual({ texts: ["Let me look."], calls: [{ name: "get_order", id: "", args: '{"order_id":"A-1"}' }] });
    const result = { role: "user", parts: [{ functionResponse: { name: "get_order", id: "call_0", response: { status: "lost" } } }] };
    expect(brief(geminiView(result))).toEqual({ results: [{ id: "call_0", text: '{"status":"lost"}' }] });
  });
});
