import { describe, expect, it } from "vitest";
import { newKey } from "./api-helpers";
import { eventually, uniqueModel } from "./helpers";
import { type Api, explained, sendOn } from "./explain-hunt.support";

/**
 * Why-it-missed hunt, one difference at a time on all four APIs (docs/api.md "Why it missed"): each miss's
 * header and `GET /api/requests/:id` name the first field that differs and where (as the request wrote it:
 * `input[i]`, `contents[i]`, a string `content` or `system`; explain-hunt.names.test.ts), and nothing of another
 * tenant's. The edited-answer case failed before its fix (the explanation named the `annotations: []` the
 * client left out of the echoed answer, not the `content` it changed); the rest pin what was already right.
 */

interface Variation {
  sys?: string;
  u1?: string;
  result?: string;
  u2?: string;
  temp?: number;
  desc?: string;
  extra?: Record<string, unknown>;
}

const PARAMS = { type: "object", properties: { order: { type: "string" } } };

/** The same conversation on each API: system prompt, user, a tool call and its JSON result, another user message. */
function bodyOf(which: Api, v: Variation = {}): Record<string, unknown> {
  const sys = v.sys ?? "You are the refund desk.";
  const u1 = v.u1 ?? "Refund order A-1 please";
  const result = v.result ?? JSON.stringify({ ok: true, status: "delivered" });
  const u2 = v.u2 ?? "Thanks, and the second one?";
  const temp = v.temp ?? 0.2;
  const desc = v.desc ?? "Refund an order";
  if (which === "chat")
    return {
      temperature: temp,
      tools: [{ type: "function", function: { name: "refund", description: desc, parameters: PARAMS } }],
      messages: [
        { role: "system", content: sys },
        { role: "user", content: u1 },
        { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "refund", arguments: '{"order":"A-1"}' } }] },
        { role: "tool", tool_call_id: "call_1", content: result },
        { role: "user", content: u2 },
      ],
      ...v.extra,
    };
  if (which === "responses")
    return {
      temperature: temp,
      instructions: sys,
      tools: [{ type: "function", name: "refund", description: desc, parameters: PARAMS }],
      input: [
        { role: "user", content: u1 },
        { type: "function_call", call_id: "call_1", name: "refund", arguments: '{"order":"A-1"}' },
        { type: "function_call_output", call_id: "call_1", output: result },
        { role: "user", content: u2 },
      ],
      ...v.extra,
    };
  if (which === "messages")
    return {
      temperature: temp,
      system: sys,
      tools: [{ name: "refund", description: desc, input_schema: PARAMS }],
      messages: [
        { role: "user", content: u1 },
        { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "refund", input: { order: "A-1" } }] },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "toolu_1", content: result },
            { type: "text", text: u2 },
          ],
        },
      ],
      ...v.extra,
    };
  return {
    systemInstruction: { parts: [{ text: sys }] },
    generationConfig: { temperature: temp, ...(v.extra?.generationConfig as object | undefined) },
    tools: [{ functionDeclarations: [{ name: "refund", description: desc, parameters: PARAMS }] }],
    contents: [
      { role: "user", parts: [{ text: u1 }] },
      { role: "model", parts: [{ functionCall: { name: "refund", args: { order: "A-1" } } }] },
      { role: "user", parts: [{ functionResponse: { name: "refund", response: JSON.parse(result) } }] },
      { role: "user", parts: [{ text: u2 }] },
    ],
    ...(v.extra?.toolConfig ? { toolConfig: v.extra.toolConfig } : {}),
  };
}

/** What each API names: a message-path change as `[kind, depth, field]`, a frame change as `["new-tree", field]`. */
interface Expect {
  sys: [string, ...Array<string | number>];
  desc: string;
  temp: string;
  toolChoice: [Record<string, unknown>, string];
  format: [Record<string, unknown>, string];
  u1: [number, string];
  result: [number, string];
  u2: [number, string];
}

const EXPECTED: Record<Api, Expect> = {
  chat: {
    sys: ["new-branch", 0, "messages[0].content"],
    desc: "tools[0].function.description",
    temp: "temperature",
    toolChoice: [{ tool_choice: "required" }, "tool_choice"],
    format: [{ response_format: { type: "json_object" } }, "response_format"],
    u1: [1, "messages[1].content"],
    result: [3, "messages[3].content.status"],
    u2: [4, "messages[4].content"],
  },
  responses: {
    sys: ["new-tree", "instructions"],
    desc: "tools[0].description",
    temp: "temperature",
    toolChoice: [{ tool_choice: "required" }, "tool_choice"],
    format: [{ text: { format: { type: "json_object" } } }, "text"],
    u1: [0, "input[0].content"],
    result: [2, "input[2].output.status"],
    u2: [3, "input[3].content"],
  },
  messages: {
    sys: ["new-tree", "system"],
    desc: "tools[0].description",
    temp: "temperature",
    toolChoice: [{ tool_choice: { type: "any" } }, "tool_choice"],
    format: [{ stop_sequences: ["END"] }, "stop_sequences"],
    u1: [0, "messages[0].content"],
    result: [2, "messages[2].content[0].content.status"],
    u2: [2, "messages[2].content[1].text"],
  },
  gemini: {
    sys: ["new-tree", "systemInstruction.parts[0].text"],
    desc: "tools[0].functionDeclarations[0].description",
    temp: "generationConfig.temperature",
    toolChoice: [{ toolConfig: { functionCallingConfig: { mode: "ANY" } } }, "toolConfig"],
    format: [{ generationConfig: { responseMimeType: "application/json" } }, "generationConfig.responseMimeType"],
    u1: [0, "contents[0].parts[0].text"],
    result: [2, "contents[2].parts[0].functionResponse.response.status"],
    u2: [3, "contents[3].parts[0].text"],
  },
};

async function missOf(which: Api, model: string, body: Record<string, unknown>, key: string, name: string) {
  const id = `why-fields-${name}-${model}`;
  const { res } = await sendOn(which, model, body, key, id);
  expect(res.headers.get("muscle-mem-cache"), name).toBe("miss");
  return { header: res.headers.get("muscle-mem-miss"), row: await explained(id, key) };
}

describe("why it missed: each difference, on every API", () => {
  for (const which of ["chat", "responses", "messages", "gemini"] as const)
    it(`Should name the first differing field and its depth on ${which}, and nothing of another tenant's`, async () => {
      const key = newKey();
      const model = uniqueModel(`why-fields-${which}`);
      const want = EXPECTED[which];
      await sendOn(which, model, bodyOf(which), key, `why-fields-base-${model}`);
      await eventually(
        async () =>
          (await sendOn(which, model, bodyOf(which), key, `why-fields-h-${crypto.randomUUID()}`, { "cache-control": "only-if-cached" })).res.status === 200,
      );

      const sys = await missOf(which, model, bodyOf(which, { sys: "You are the returns desk." }), key, "sys");
      if (want.sys[0] === "new-branch") {
        expect(sys.header).toBe(`new-branch; depth=${want.sys[1]}`);
        expect(sys.row.explanation?.divergence).toMatchObject({ index: want.sys[1], field: want.sys[2] });
      } else {
        expect(sys.header).toBe("new-tree");
        expect(sys.row.explanation?.frame).toMatchObject({ field: want.sys[1] });
      }
      expect(JSON.stringify(sys.row.explanation)).toContain("turns");

      const frames: Array<[string, Record<string, unknown>, string]> = [
        ["desc", bodyOf(which, { desc: "Refund one order" }), want.desc],
        ["temp", bodyOf(which, { temp: 0.7 }), want.temp],
        ["choice", bodyOf(which, { extra: want.toolChoice[0] }), want.toolChoice[1]],
        ["format", bodyOf(which, { extra: want.format[0] }), want.format[1]],
      ];
      for (const [name, body, field] of frames) {
        const m = await missOf(which, model, body, key, name);
        expect(m.header, name).toBe("new-tree");
        expect(m.row.explanation, name).toMatchObject({ kind: "new-tree", frame: { field, nearest_model: model } });
      }
      const other = await missOf(which, `${model}-b`, bodyOf(which), key, "model");
      expect(other.row.explanation?.frame).toMatchObject({ field: "model", nearest_model: model });

      const paths: Array<[string, Variation, [number, string]]> = [
        ["u1", { u1: "Refund order A-2 please" }, want.u1],
        ["result", { result: JSON.stringify({ ok: true, status: "shipped" }) }, want.result],
        ["u2", { u2: "Thanks, and the third one?" }, want.u2],
      ];
      for (const [name, v, [depth, field]] of paths) {
        const m = await missOf(which, model, bodyOf(which, v), key, name);
        expect(m.header, name).toBe(`new-branch; depth=${depth}`);
        expect(m.row.explanation, name).toMatchObject({ kind: "new-branch", depth, divergence: { index: depth, field } });
      }

      // The same request under another credential: a new tree of its own tenant, compared with none of the first's.
      const stranger = newKey();
      const theirs = await missOf(which, model, bodyOf(which), stranger, "tenant");
      expect(theirs.header).toBe("new-tree");
      expect(theirs.row.explanation).toMatchObject({
        kind: "new-tree",
        frame: { nearest_tree: null, nearest_model: null, field: null, diff: null, trees_compared: 0 },
      });
    });

  it("Should name the content a client changed in an echoed answer, not the empty field it left out", async () => {
    const key = newKey();
    const model = uniqueModel("why-fields-echo");
    const messages = [
      { role: "system", content: "S" },
      { role: "user", content: "hello there" },
    ];
    const { text } = await sendOn("chat", model, { messages }, key, `why-echo-1-${model}`);
    const answer = (JSON.parse(text) as { choices: Array<{ message: { content: string; annotations?: unknown } }> }).choices[0].message;
    expect(answer.annotations).toEqual([]);
    await eventually(
      async () =>
        (await sendOn("chat", model, { messages }, key, `why-echo-h-${crypto.randomUUID()}`, { "cache-control": "only-if-cached" })).res.status === 200,
    );
    const edited = [...messages, { role: "assistant", content: "something else" }, { role: "user", content: "more" }];
    const m = await missOf("chat", model, { messages: edited }, key, "echo");
    expect(m.header).toBe("new-branch; depth=2");
    expect(m.row.explanation?.divergence).toMatchObject({ index: 2, role: "assistant", field: "messages[2].content" });
    expect(m.row.explanation?.divergence?.diff).toMatchObject({ incoming: "something else" });

    // An extra turn after the answer as it was served: the new message has no recorded sibling to compare.
    const extra = await missOf("chat", model, { messages: [...messages, answer, { role: "user", content: "more" }] }, key, "extra");
    expect(extra.header).toBe("new-branch; depth=3");
    expect(extra.row.explanation?.divergence).toMatchObject({ index: 3, role: "user", siblings: 0, closest: null, field: null, diff: null });
  });
});
