import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SCRIPTED_SIGNATURE } from "../../tools/scripted-gemini-compat";
import { geminiRefundDesk, startScriptedGeminiModel, type ScriptedGeminiModel } from "../../tools/scripted-gemini-model";
import { startWranglerDev, type WranglerDev } from "../support/wrangler-dev";

let model: ScriptedGeminiModel;
let dev: WranglerDev;
beforeAll(async () => {
  model = await startScriptedGeminiModel({ script: geminiRefundDesk });
  dev = await startWranglerDev({ vars: { GEMINI_BASE_URL: model.url } });
});
afterAll(async () => {
  await dev?.stop();
  await model?.close();
});

/** The `openai` package on the Worker's Gemini-compat base; each response's cache outcome noted in `outcomes`. */
function client(key: string, outcomes: string[]): OpenAI {
  return new OpenAI({
    apiKey: key,
    baseURL: `${dev.url}/v1beta/openai`,
    maxRetries: 0,
    fetch: async (input: string | URL | Request, init?: RequestInit) => {
      const res = await fetch(input, init);
      outcomes.push(res.headers.get("muscle-mem-cache") ?? "none");
      return res;
    },
  });
}

const tools: OpenAI.ChatCompletionTool[] = [
  { type: "function", function: { name: "get_order", parameters: { type: "object", properties: { order_id: { type: "string" } } } } },
];

describe("a streamed Gemini 3 tool call through the compat route, with the openai package (wrangler dev)", () => {
  it("Should miss, then hit, a streamed tool call whose extra_content carries the thought signature, and walk the echoed next turn", async () => {
    const key = `gm-sig-${crypto.randomUUID().slice(0, 8)}`;
    const name = `sig-e2e-${crypto.randomUUID().slice(0, 8)}`;
    const outcomes: string[] = [];
    const openai = client(key, outcomes);
    const history: OpenAI.ChatCompletionMessageParam[] = [{ role: "user", content: "Please refund order #S-1." }];
    // Gemini streams each call whole, with no `index`: the raw chunks, as the package yields them.
    const streamed = async () => {
      const calls: Array<Record<string, unknown>> = [];
      for await (const chunk of await openai.chat.completions.create({ model: name, messages: history, tools, stream: true })) {
        for (const call of chunk.choices[0]?.delta.tool_calls ?? []) calls.push(call as unknown as Record<string, unknown>);
      }
      return calls;
    };
    const miss = await streamed();
    expect(miss).toHaveLength(1);
    expect(miss[0]).toMatchObject({ extra_content: SCRIPTED_SIGNATURE, function: { name: "get_order" } });
    // The recording lands after the stream ends: the hit is asked for until it is served (bounded).
    let hit: Array<Record<string, unknown>> = [];
    for (let tries = 0; tries < 50 && outcomes[outcomes.length - 1] !== "hit"; tries++) hit = await streamed();
    expect(outcomes[0]).toBe("miss");
    expect(outcomes[outcomes.length - 1]).toBe("hit");
    expect(hit[0]).toMatchObject({ extra_content: SCRIPTED_SIGNATURE, type: "function", function: { name: "get_order", arguments: "" } });
    expect(model.generations(name)).toBe(1);
    // A JSON request is served the same call, signature included; the agent echoes it with the tool's result.
    const json = await openai.chat.completions.create({ model: name, messages: history, tools });
    expect(outcomes[outcomes.length - 1]).toBe("hit");
    const message = json.choices[0].message;
    expect(message.tool_calls?.[0]).toMatchObject({ extra_content: SCRIPTED_SIGNATURE, function: { name: "get_order", arguments: '{"order_id":"S-1"}' } });
    history.push({ role: "assistant", content: message.content, tool_calls: message.tool_calls });
    history.push({ role: "tool", tool_call_id: message.tool_calls?.[0]?.id ?? "", content: '{"order_id":"S-1","status":"delivered","amount":42.5}' });
    const next = await openai.chat.completions.stream({ model: name, messages: history, tools }).finalChatCompletion();
    expect(outcomes[outcomes.length - 1]).toBe("miss");
    expect(next.choices[0].message.tool_calls?.[0]?.function).toMatchObject({ name: "refund" });
    expect(model.generations(name)).toBe(2);
    // The next turn was recorded on the signed path: asked again (bounded, the recording lands after the stream), a hit.
    for (let tries = 0; tries < 50 && outcomes[outcomes.length - 1] !== "hit"; tries++) {
      const again = await openai.chat.completions.stream({ model: name, messages: history, tools }).finalChatCompletion();
      expect(again.choices[0].message.tool_calls?.[0]?.function).toEqual(next.choices[0].message.tool_calls?.[0]?.function);
    }
    expect(outcomes[outcomes.length - 1]).toBe("hit");
    expect(model.generations(name)).toBe(2);
  });
});
