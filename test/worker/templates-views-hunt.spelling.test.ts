import { afterEach, describe, expect, it, vi } from "vitest";
import { newKey } from "./api-helpers";
import { uniqueModel } from "./helpers";
import { type ApiName, ask, FOURTH, ORDERS, orderOf, scriptModel, served, teach } from "./templates-views-hunt.support";
import { responsesReply } from "../support/responses-reply";

/**
 * A template's call written as the model writes it: the model spells a number `1.0` and puts `email` before
 * `order_id` in its call, in its own bytes (which JSON.stringify would write `1` and in another order). A
 * template's answer for a new order must keep both, in the JSON hit and in the streamed one, on each API.
 */

afterEach(() => vi.restoreAllMocks());

const SYSTEM = "You are the refund desk. Refund one unit of the order the user names.";
const schema = { type: "object", properties: { order_id: { type: "string" }, email: { type: "string" }, qty: { type: "number" } } };
/** The call's arguments as the model writes them. */
const written = (o: string, e: string) => `{"email":"${e}","qty":1.0,"order_id":"${o}"}`;

function request(api: ApiName, o: string, e: string): Record<string, unknown> {
  if (api === "anthropic")
    return { max_tokens: 1024, system: SYSTEM, tools: [{ name: "refund", input_schema: schema }], messages: [{ role: "user", content: ask(o, e) }] };
  if (api === "responses")
    return { instructions: SYSTEM, tools: [{ type: "function", name: "refund", parameters: schema }], input: [{ role: "user", content: ask(o, e) }] };
  return {
    systemInstruction: { parts: [{ text: SYSTEM }] },
    tools: [{ functionDeclarations: [{ name: "refund", parameters: schema }] }],
    contents: [{ role: "user", parts: [{ text: ask(o, e) }] }],
  };
}

/** The model's answer as raw bytes: the call only, its arguments spelled as `written`. */
function answer(api: ApiName, body: Record<string, unknown>): { raw: string } {
  const { order_id, email } = orderOf(body);
  const args = written(order_id, email);
  if (api === "anthropic")
    return {
      raw: `{"id":"msg_x","type":"message","role":"assistant","model":"m","content":[{"type":"tool_use","id":"toolu_x","name":"refund","input":${args}}],"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":5}}`,
    };
  if (api === "responses")
    return {
      raw: JSON.stringify(
        responsesReply("m", [{ id: "fc_x", type: "function_call", status: "completed", call_id: "call_x", name: "refund", arguments: args }]),
      ),
    };
  return {
    raw: `{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"refund","args":${args}}}]},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":5,"totalTokenCount":15},"modelVersion":"m"}`,
  };
}

/** The call's arguments text in a JSON hit, or in a stream (the deltas' partial texts joined), as the client receives them. */
function argsText(api: ApiName, text: string, stream: boolean): string {
  if (!stream) {
    if (api === "responses") return (JSON.parse(text) as { output: Array<{ arguments: string }> }).output[0].arguments;
    // The raw bytes of the call's input or args object: the first `{` after the key, to its matching `}` (no braces in the values here).
    const key = api === "anthropic" ? '"input":' : '"args":';
    const at = text.indexOf(key) + key.length;
    return text.slice(at, text.indexOf("}", at) + 1);
  }
  const events = text.split(/\r?\n\r?\n/).flatMap((e) =>
    e
      .split(/\r?\n/)
      .filter((l) => l.startsWith("data: "))
      .map((l) => l.slice(6)),
  );
  if (api === "anthropic")
    return events
      .map((d) => JSON.parse(d) as { delta?: { type: string; partial_json?: string } })
      .filter((d) => d.delta?.type === "input_json_delta")
      .map((d) => d.delta?.partial_json)
      .join("");
  if (api === "responses")
    return events
      .map((d) => JSON.parse(d) as { type: string; delta?: string })
      .filter((d) => d.type === "response.function_call_arguments.delta")
      .map((d) => d.delta)
      .join("");
  const chunk = events.find((d) => d.includes('"functionCall"')) ?? "";
  return argsText(api, chunk, false);
}

describe.each(["anthropic", "responses", "gemini"] as const)("a template's call as the model spells it, on %s", (api) => {
  it("Should serve the fourth order's call with 1.0 and the model's key order, JSON and streamed", async () => {
    const upstream = scriptModel((_, body) => answer(api, body));
    const key = newKey();
    const model = uniqueModel(`hview-spell-${api}`);
    await teach(
      api,
      key,
      model,
      ORDERS.map(([o, e]) => request(api, o, e)),
    );
    for (const stream of [false, true]) {
      const hit = await served(api, key, model, request(api, ...FOURTH), stream);
      expect([hit.cache, hit.template !== null], hit.text).toEqual(["hit", true]);
      expect(argsText(api, hit.text, stream)).toBe(written(...FOURTH));
    }
    expect(upstream.asked()).toBe(3);
  });
});
