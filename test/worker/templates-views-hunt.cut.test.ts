import { afterEach, describe, expect, it, vi } from "vitest";
import { newKey } from "./api-helpers";
import { uniqueModel } from "./helpers";
import { type ApiName, ask, FOURTH, type Model, ORDERS, orderOf, scriptModel, served, teach } from "./templates-views-hunt.support";

/**
 * Where a generation stops depends on the values a template would put in: an answer cut by the token limit
 * (`max_tokens`, Gemini's `MAX_TOKENS`) stops at another place when a copied value is longer or shorter, and a
 * stop sequence that a new value holds would have stopped the model inside it. A template renders the learned
 * answer with the new values and serves it whole: an answer the model would not give.
 */

afterEach(() => vi.restoreAllMocks());

const SYSTEM = "You are the refund desk. Say what you refund.";
/** What the desk's model writes (before any limit): it copies the order and the email. */
const full = (o: string, e: string) => `Refunding order ${o} for ${e}. The money is back on your card within five days.`;
/** The scripted model's limit, in characters (a stand-in for tokens): the three teaching answers are cut at one place. */
const LIMIT = 60;

/** The desk's model: the text cut at LIMIT characters, or before the first stop sequence the request names. */
function desk(stops: (body: Record<string, unknown>) => string[], limit = LIMIT): Model {
  return (api, body) => {
    const { order_id, email } = orderOf(body);
    const text = full(order_id, email);
    const at = Math.min(...stops(body).map((s) => (text.includes(s) ? text.indexOf(s) : Number.POSITIVE_INFINITY)));
    const [out, why] = at < Math.min(limit, text.length) ? [text.slice(0, at), "stop"] : text.length > limit ? [text.slice(0, limit), "cut"] : [text, "end"];
    if (api === "anthropic") {
      const stop = why === "cut" ? "max_tokens" : why === "stop" ? "stop_sequence" : "end_turn";
      const sequence = why === "stop" ? stops(body).find((s) => text.slice(at).startsWith(s)) : null;
      return {
        id: "msg_x",
        type: "message",
        role: "assistant",
        model: body.model,
        content: [{ type: "text", text: out }],
        stop_reason: stop,
        stop_sequence: sequence ?? null,
        usage: { input_tokens: 10, output_tokens: 5 },
      };
    }
    return {
      candidates: [{ content: { role: "model", parts: [{ text: out }] }, finishReason: why === "cut" ? "MAX_TOKENS" : "STOP", index: 0 }],
      usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
      modelVersion: "gemini",
    };
  };
}

function request(api: ApiName, order: string, email: string, stops: string[]): Record<string, unknown> {
  if (api === "anthropic")
    return { max_tokens: 20, system: SYSTEM, ...(stops.length > 0 ? { stop_sequences: stops } : {}), messages: [{ role: "user", content: ask(order, email) }] };
  return {
    systemInstruction: { parts: [{ text: SYSTEM }] },
    generationConfig: { maxOutputTokens: 20, ...(stops.length > 0 ? { stopSequences: stops } : {}) },
    contents: [{ role: "user", parts: [{ text: ask(order, email) }] }],
  };
}

const stopsOf = (api: ApiName) => (body: Record<string, unknown>) =>
  api === "anthropic" ? ((body.stop_sequences as string[]) ?? []) : (((body.generationConfig as Record<string, unknown>)?.stopSequences as string[]) ?? []);

/** The text the model answers a request with, as the Worker serves it. */
function textOf(api: ApiName, text: string): string {
  const body = JSON.parse(text) as { content?: Array<{ text: string }>; candidates?: Array<{ content: { parts: Array<{ text: string }> } }> };
  return api === "anthropic" ? (body.content?.[0]?.text ?? "") : (body.candidates?.[0]?.content.parts[0]?.text ?? "");
}

describe.each(["anthropic", "gemini"] as const)("where the model stops, on %s", (api) => {
  it("Should not serve a template learned from answers cut by the token limit: another value cuts the answer elsewhere", async () => {
    const upstream = scriptModel(desk(stopsOf(api)));
    const key = newKey();
    const model = uniqueModel(`hview-cut-${api}`);
    await teach(
      api,
      key,
      model,
      ORDERS.map(([o, e]) => request(api, o, e, [])),
    );
    const fourth = await served(api, key, model, request(api, FOURTH[0], "daniel@example.io", []));
    expect(textOf(api, fourth.text)).toBe(full(FOURTH[0], "daniel@example.io").slice(0, LIMIT));
    expect([fourth.cache, fourth.template]).toEqual(["miss", null]);
    expect(upstream.asked()).toBe(4);
  });

  it("Should not serve a template's answer that holds a stop sequence of the request: the model stops there", async () => {
    const stops = ["404"];
    const upstream = scriptModel(desk(stopsOf(api), 1000));
    const key = newKey();
    const model = uniqueModel(`hview-stop-${api}`);
    await teach(
      api,
      key,
      model,
      ORDERS.map(([o, e]) => request(api, o, e, stops)),
    );
    // A fourth order that holds no stop sequence is served from the template (it was learned).
    const plain = await served(api, key, model, request(api, "E-5005", "eve@example.io", stops));
    expect([plain.cache, plain.template !== null, textOf(api, plain.text)]).toEqual(["hit", true, full("E-5005", "eve@example.io")]);
    // D-4040 holds "404": the model stops inside it.
    const fourth = await served(api, key, model, request(api, "D-4040", FOURTH[1], stops));
    expect(textOf(api, fourth.text)).toBe("Refunding order D-");
    expect([fourth.cache, fourth.template]).toEqual(["miss", null]);
    expect(fourth.miss).toMatch(/answer is not served: the answer holds the request's stop sequence "404"/);
    expect(upstream.asked()).toBe(4);
  });
});
