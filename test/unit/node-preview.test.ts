import { describe, expect, it } from "vitest";
import { previewOf } from "../../src/store/tree/node-preview";

const chatCalls = JSON.stringify([{ function: { arguments: '{"order_id":"A-1"}', name: "get_order" }, id: "call_0", type: "function" }]);

describe("node previews of every API's stored messages", () => {
  it("Should preview chat text, tool calls and tool results as before", () => {
    expect(previewOf("user", "Refund   order\n#A-1", null, null)).toBe("Refund order #A-1");
    expect(previewOf("assistant", null, chatCalls, null)).toBe("→ get_order()");
    expect(previewOf("tool", '{"status":"delivered"}', null, "call_0")).toBe('[call_0] {"status":"delivered"}');
    expect(previewOf("user", JSON.stringify(["first part", "second part"]), null, null)).toBe("first part second part");
    expect(previewOf("assistant", null, null, null)).toBe("(assistant, empty)");
  });

  it("Should keep text that only looks like a list as it is", () => {
    expect(previewOf("user", "[1, 2] are the ids", null, null)).toBe("[1, 2] are the ids");
    expect(previewOf("tool", "[1,2,3]", null, "call_1")).toBe("[call_1] [1,2,3]");
  });

  it("Should preview Anthropic blocks, Responses items and Gemini parts by their text, calls and results", () => {
    const anthropic = JSON.stringify([
      { text: "Looking.", type: "text" },
      { id: "toolu_0", input_json: "{}", name: "get_order", type: "tool_use" },
    ]);
    expect(previewOf("assistant", anthropic, null, null)).toBe("Looking. → get_order()");
    expect(previewOf("user", JSON.stringify([{ content: "delivered", tool_use_id: "toolu_0", type: "tool_result" }]), null, null)).toBe("[toolu_0] delivered");
    const items = JSON.stringify([
      { content: [{ text: "On it.", type: "text" }], type: "message" },
      { arguments: "{}", call_id: "call_0", name: "refund", type: "function_call" },
    ]);
    expect(previewOf("assistant", null, items, null)).toBe("On it. → refund()");
    const parts = JSON.stringify([{ functionResponse: { name: "get_order", response: { status: "lost" } } }]);
    expect(previewOf("user", null, parts, null)).toBe('[get_order] {"status":"lost"}');
  });

  it("Should preview a slice cut mid-JSON by its complete literals, naming calls only for the model's turns", () => {
    const long = JSON.stringify([{ function: { arguments: JSON.stringify({ note: "x".repeat(3000) }), name: "get_order" }, id: "call_0", type: "function" }]);
    expect(previewOf("assistant", null, long.slice(0, 2000), null)).toBe("→ …");
    const named = JSON.stringify([{ text: "Let me look." }, { functionCall: { argsJson: "{}", name: "get_order" } }, { text: "y".repeat(3000) }]);
    expect(previewOf("assistant", null, named.slice(0, 2000), null)).toBe("Let me look. → get_order()");
    const result = JSON.stringify([{ functionResponse: { name: "get_order", response: { rows: "z".repeat(3000) } } }]);
    expect(previewOf("user", null, result.slice(0, 2000), null)).not.toContain("get_order()");
    const blocks = JSON.stringify([
      { text: "Short question.", type: "text" },
      { text: "w".repeat(1000), type: "text" },
    ]);
    expect(previewOf("user", blocks.slice(0, 400), null, null)).toBe("Short question.");
  });

  it("Should cut a long preview at `max` characters with an ellipsis", () => {
    const preview = previewOf("user", "a".repeat(500), null, null);
    expect(preview).toHaveLength(160);
    expect(preview.endsWith("…")).toBe(true);
  });
});
