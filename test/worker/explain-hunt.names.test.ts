import { describe, expect, it } from "vitest";
import { newKey } from "./api-helpers";
import { eventually, uniqueModel } from "./helpers";
import { type Api, explained, sendOn } from "./explain-hunt.support";

/**
 * Why-it-missed names a differing field as the request wrote it (docs/api.md "Why it missed"), with the request's
 * own index where the canonical message is not one request item: a Responses run of reasoning and a function call
 * is one message (`input[2]`, not `messages[1]`), consecutive Gemini model contents are one, an empty text part
 * or block the canonical form leaves out still counts, a string `content` or `system` is named as the string. A
 * place that cannot be mapped exactly is `[*]`, never a guessed index. Each case failed before (every field was
 * `messages[<canonical index>]` with the canonical path inside).
 */

interface Variation {
  u1?: string;
  order?: string;
  status?: string;
  u2?: string;
  said?: string[];
}

const PARAMS = { type: "object", properties: { order: { type: "string" } } };

function bodyOf(which: Api, v: Variation = {}): Record<string, unknown> {
  const u1 = v.u1 ?? "Refund order A-1 please";
  const args = JSON.stringify({ order: v.order ?? "A-1" });
  const result = JSON.stringify({ ok: true, status: v.status ?? "delivered" });
  const u2 = v.u2 ?? "Thanks, and the second one?";
  if (which === "chat")
    return {
      tools: [{ type: "function", function: { name: "refund", parameters: PARAMS } }],
      messages: [
        { role: "system", content: "You are the refund desk." },
        { role: "user", content: [{ type: "text", text: u1 }] },
        { role: "assistant", content: null, tool_calls: [{ id: "call_9", type: "function", function: { name: "refund", arguments: args } }] },
        { role: "tool", tool_call_id: "call_9", content: [{ type: "text", text: result }] },
        { role: "user", content: u2 },
      ],
    };
  if (which === "responses")
    return {
      instructions: "You are the refund desk.",
      tools: [{ type: "function", name: "refund", parameters: PARAMS }],
      input: [
        {
          role: "user",
          content: [
            { type: "input_text", text: "" },
            { type: "input_text", text: u1 },
          ],
        },
        { type: "reasoning", id: "rs_1", summary: [] },
        { type: "function_call", call_id: "call_9", name: "refund", arguments: args },
        { type: "function_call_output", call_id: "call_9", output: result },
        { role: "user", content: u2 },
      ],
    };
  if (which === "messages")
    return {
      system: [{ type: "text", text: "You are the refund desk." }],
      tools: [{ name: "refund", input_schema: PARAMS }],
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "" },
            { type: "text", text: u1 },
          ],
        },
        { role: "assistant", content: [{ type: "tool_use", id: "toolu_9", name: "refund", input: JSON.parse(args) }] },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "toolu_9", content: result },
            { type: "text", text: u2 },
          ],
        },
      ],
    };
  const said = v.said ?? ["Let me check."];
  return {
    systemInstruction: { parts: [{ text: "You are the refund desk." }] },
    tools: [{ functionDeclarations: [{ name: "refund", parameters: PARAMS }] }],
    contents: [
      { role: "user", parts: [{ text: u1 }] },
      ...said.map((text) => ({ role: "model", parts: [{ text }] })),
      { role: "model", parts: [{ functionCall: { name: "refund", args: JSON.parse(args) } }] },
      { role: "user", parts: [{ functionResponse: { name: "refund", response: JSON.parse(result) } }] },
      { role: "user", parts: [{ text: u2 }] },
    ],
  };
}

/** Per API: a variation, the depth it leaves the tree at (the canonical index) and the field as the request wrote it. */
const CASES: Record<Api, Array<[string, Variation, number, string]>> = {
  chat: [
    ["text part", { u1: "Refund order A-2 please" }, 1, "messages[1].content[0].text"],
    ["arguments", { order: "A-2" }, 2, "messages[2].tool_calls[0].function.arguments.order"],
    ["tool result part", { status: "shipped" }, 3, "messages[3].content[0].text.status"],
  ],
  responses: [
    ["text after an empty part", { u1: "Refund order A-2 please" }, 0, "input[0].content[1].text"],
    ["call after reasoning", { order: "A-2" }, 1, "input[2].arguments.order"],
    ["output after the run", { status: "shipped" }, 2, "input[3].output.status"],
    ["string content", { u2: "Thanks, and the third one?" }, 3, "input[4].content"],
  ],
  messages: [
    ["text after an empty block", { u1: "Refund order A-2 please" }, 0, "messages[0].content[1].text"],
    ["tool_use input", { order: "A-2" }, 1, "messages[1].content[0].input.order"],
    ["tool_result string", { status: "shipped" }, 2, "messages[2].content[0].content.status"],
  ],
  gemini: [
    ["model text", { said: ["Let me look."] }, 1, "contents[1].parts[0].text"],
    ["call in the second model content", { order: "A-2" }, 1, "contents[2].parts[0].functionCall.args.order"],
    ["response after the model run", { status: "shipped" }, 2, "contents[3].parts[0].functionResponse.response.status"],
    ["text after it", { u2: "Thanks, and the third one?" }, 3, "contents[4].parts[0].text"],
    // Two model contents whose texts the tree joins into one part: which content differs is not told.
    ["joined model texts", { said: ["Let me ", "see."] }, 1, "contents[*].parts[*].text"],
  ],
};

describe("why it missed: fields named as the request wrote them", () => {
  for (const which of ["chat", "responses", "messages", "gemini"] as const)
    it(`Should name each differing field with ${which}'s own path and the request's own index`, async () => {
      const key = newKey();
      const model = uniqueModel(`why-names-${which}`);
      await sendOn(which, model, bodyOf(which), key, `why-names-base-${model}`);
      await eventually(
        async () =>
          (await sendOn(which, model, bodyOf(which), key, `why-names-h-${crypto.randomUUID()}`, { "cache-control": "only-if-cached" })).res.status === 200,
      );
      for (const [name, v, depth, field] of CASES[which]) {
        const id = `why-names-${name.replaceAll(" ", "-")}-${model}`;
        const { res } = await sendOn(which, model, bodyOf(which, v), key, id);
        expect(res.headers.get("muscle-mem-cache"), name).toBe("miss");
        expect(res.headers.get("muscle-mem-miss"), name).toBe(`new-branch; depth=${depth}`);
        const row = await explained(id, key);
        expect(row.explanation, name).toMatchObject({ kind: "new-branch", depth, divergence: { index: depth, field } });
      }
    });

  it("Should name Messages' system prompt as sent, a string as `system`", async () => {
    const key = newKey();
    const model = uniqueModel("why-names-system");
    const body = (system: unknown) => ({ ...bodyOf("messages"), system });
    await sendOn("messages", model, body("You are the refund desk."), key, `why-names-sys-base-${model}`);
    const asString = `why-names-sys-s-${model}`;
    await sendOn("messages", model, body("You are the returns desk."), key, asString);
    expect((await explained(asString, key)).explanation?.frame).toMatchObject({ field: "system" });
    const asBlocks = `why-names-sys-b-${model}`;
    await sendOn("messages", model, body([{ type: "text", text: "You are the shipping desk." }]), key, asBlocks);
    expect((await explained(asBlocks, key)).explanation?.frame).toMatchObject({ field: "system[0].text" });
  });
});
