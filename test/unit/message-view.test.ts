import { describe, expect, it } from "vitest";
import { messageView } from "../../dashboard/js/message-view.js";

/** The view with its empty lists left out, for short expectations. */
function shown(m: Record<string, unknown>) {
  return Object.fromEntries(Object.entries(messageView(m)).filter(([, v]) => v.length > 0));
}

describe("the dashboard's node panel view of every API's message", () => {
  it("Should show chat text, tool calls with their arguments, tool results and refusals", () => {
    expect(shown({ role: "user", content: "Refund order #A-1" })).toEqual({ texts: ["Refund order #A-1"] });
    expect(
      shown({
        role: "user",
        content: [
          { type: "text", text: "a" },
          { type: "text", text: "b" },
        ],
      }),
    ).toEqual({ texts: ["a", "b"] });
    const call = { id: "call_0", type: "function", function: { name: "get_order", arguments: '{"order_id":"A-1"}' } };
    expect(shown({ role: "assistant", content: null, tool_calls: [call] })).toEqual({
      calls: [{ name: "get_order", id: "call_0", args: '{"order_id":"A-1"}' }],
    });
    expect(shown({ role: "tool", tool_call_id: "call_0", content: '{"status":"delivered"}' })).toEqual({
      results: [{ id: "call_0", text: '{"status":"delivered"}' }],
    });
    expect(shown({ role: "assistant", content: null, refusal: "No." })).toEqual({ refusals: ["No."] });
    expect(shown({ role: "assistant", content: null })).toEqual({});
  });

  it("Should show Anthropic text, tool_use and tool_result blocks", () => {
    const answer = {
      role: "assistant",
      content: [
        { type: "text", text: "Looking." },
        { type: "tool_use", id: "toolu_0", name: "get_order", input: { order_id: "A-1" } },
      ],
    };
    expect(shown(answer)).toEqual({ texts: ["Looking."], calls: [{ name: "get_order", id: "toolu_0", args: '{"order_id":"A-1"}' }] });
    expect(shown({ role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_0", content: "delivered" }] })).toEqual({
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
    expect(shown(answer)).toEqual({ texts: ["On it."], refusals: ["Not that."], calls: [{ name: "get_order", id: "call_0", args: '{"order_id":"A-1"}' }] });
    expect(shown({ role: "user", items: [{ type: "message", role: "user", content: [{ type: "input_text", text: "Refund #A-1." }] }] })).toEqual({
      texts: ["Refund #A-1."],
    });
    expect(shown({ role: "tool", items: [{ type: "function_call_output", call_id: "call_0", output: '{"status":"delivered"}' }] })).toEqual({
      results: [{ id: "call_0", text: '{"status":"delivered"}' }],
    });
  });

  it("Should show Gemini parts: text, functionCall name and args, functionResponse", () => {
    const answer = { role: "model", parts: [{ text: "Let me look." }, { functionCall: { name: "get_order", args: { order_id: "A-1" } } }] };
    expect(shown(answer)).toEqual({ texts: ["Let me look."], calls: [{ name: "get_order", id: "", args: '{"order_id":"A-1"}' }] });
    const result = { role: "user", parts: [{ functionResponse: { name: "get_order", id: "call_0", response: { status: "lost" } } }] };
    expect(shown(result)).toEqual({ results: [{ id: "call_0", text: '{"status":"lost"}' }] });
  });
});
