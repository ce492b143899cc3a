import { describe, expect, it } from "vitest";
import { segmentsOf } from "../../src/engine/explain/compare";
import { requestFieldNames } from "../../src/engine/explain/request-paths";

/** Field names as the request wrote them (src/engine/explain/request-paths.ts): where no index can be told exactly, `[*]`. */

const RESPONSES = JSON.stringify({ "muscle-mem:api": "openai-responses", model: "m" });
const GEMINI = JSON.stringify({ "muscle-mem:api": "gemini", model: "m" });

describe("segmentsOf", () => {
  it("Should read back the steps of a path fieldPath wrote", () => {
    expect(segmentsOf('tool_calls[0].function["a b"].x-y')).toEqual(["tool_calls", 0, "function", "a b", "x-y"]);
    expect(segmentsOf("")).toEqual([]);
  });
});

describe("requestFieldNames", () => {
  it("Should star the item when the request's items do not make the canonical messages (an input the Worker completed)", () => {
    const body = { input: [{ role: "user", content: "hi" }] };
    const names = requestFieldNames(RESPONSES, body, 3);
    expect(names.message(2, ["items", 1, "arguments", "order"], null)).toBe("input[*].arguments.order");
    expect(requestFieldNames(RESPONSES, body, 1).message(0, ["content", 0, "text"], null)).toBe("input[0].content");
  });

  it("Should name a Responses function output's canonical `role` and `custom` as its `type`", () => {
    const input = [
      { role: "user", content: "hi" },
      { type: "custom_tool_call", call_id: "c", name: "patch", input: "x" },
      { type: "custom_tool_call_output", call_id: "c", output: "done" },
    ];
    const names = requestFieldNames(RESPONSES, { input }, 3);
    expect(names.message(2, ["role"], null)).toBe("input[2].type");
    expect(names.message(2, ["custom"], null)).toBe("input[2].type");
    expect(names.message(1, ["items", 0, "input"], null)).toBe("input[1].input");
  });

  it("Should name a Responses input string as `input`", () => {
    expect(requestFieldNames(RESPONSES, { input: "hi" }, 1).message(0, ["content", 0, "text"], null)).toBe("input");
  });

  it("Should star Gemini parts whose texts the tree joined, and keep the content when it is one", () => {
    const body = {
      contents: [
        { role: "user", parts: [{ text: "a" }] },
        { role: "model", parts: [{ text: "x" }, { text: "y" }] },
      ],
    };
    const canonical = { role: "model", parts: [{ text: "xy" }] };
    expect(requestFieldNames(GEMINI, body, 2).message(1, ["parts", 0, "text"], canonical)).toBe("contents[1].parts[*].text");
  });

  it("Should name a frame field as far as the request holds it, and a field only the frame has as it is", () => {
    const names = requestFieldNames(JSON.stringify({ "muscle-mem:api": "anthropic" }), { system: "S", messages: [] }, 0);
    expect(names.frame(["system", 0, "text"])).toBe("system");
    expect(names.frame(["model"])).toBe("model");
  });

  it("Should name fields through the frame's provider: Chat Completions' for no API, one no provider has, or a frame that is not JSON", () => {
    const chatBody = { messages: [{ role: "user", content: [{ type: "text", text: "a" }] }] };
    const canonical = { role: "user", content: "a" };
    for (const frame of [JSON.stringify({ model: "m" }), JSON.stringify({ "muscle-mem:api": "mistral" }), "not json"])
      expect(requestFieldNames(frame, chatBody, 1).message(0, ["content"], canonical), frame).toBe("messages[0].content[0].text");
    // Messages leaves empty text blocks out of the canonical form: the request's index counts them.
    const messagesBody = {
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "" },
            { type: "text", text: "a" },
          ],
        },
      ],
    };
    const anthropic = JSON.stringify({ "muscle-mem:api": "anthropic" });
    expect(requestFieldNames(anthropic, messagesBody, 1).message(0, ["content", 0, "text"], { role: "user", content: [{ type: "text", text: "a" }] })).toBe(
      "messages[0].content[1].text",
    );
  });
});
