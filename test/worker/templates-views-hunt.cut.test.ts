import { afterEach, describe, expect, it, vi } from "vitest";
import { newKey } from "./api-helpers";
import { uniqueModel } from "./helpers";
import { ask, FOURTH, type Model, ORDERS, orderOf, type Route, scriptModel, served, teach } from "./templates-views-hunt.support";

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
/** The scripted model reads its token limit as characters (each character a token): where it cuts is plain. */
type Body = Record<string, unknown>;
const configOf = (body: Body) => (body.generationConfig as Body | undefined) ?? {};
const limitOf = (api: Route, body: Body) => Number(api === "gemini" ? configOf(body).maxOutputTokens : body.max_tokens);
const stopsOf = (api: Route, body: Body) =>
  ((api === "anthropic" ? body.stop_sequences : api === "chat" ? body.stop : configOf(body).stopSequences) as string[] | undefined) ?? [];

/** The desk's model: the text cut at the request's limit, or before the first stop sequence the request names; its usage is its length. */
const desk: Model = (api, body) => {
  const { order_id, email } = orderOf(body);
  const text = full(order_id, email);
  const limit = limitOf(api, body);
  const stops = stopsOf(api, body);
  const at = Math.min(...stops.map((s) => (text.includes(s) ? text.indexOf(s) : Number.POSITIVE_INFINITY)));
  const [out, why] = at < Math.min(limit, text.length) ? [text.slice(0, at), "stop"] : text.length > limit ? [text.slice(0, limit), "cut"] : [text, "end"];
  if (api === "chat")
    return {
      id: "chatcmpl-x",
      object: "chat.completion",
      created: 1,
      model: body.model,
      choices: [{ index: 0, message: { role: "assistant", content: out }, finish_reason: why === "cut" ? "length" : "stop" }],
      usage: { prompt_tokens: 10, completion_tokens: out.length, total_tokens: 10 + out.length },
    };
  if (api === "anthropic") {
    const stop = why === "cut" ? "max_tokens" : why === "stop" ? "stop_sequence" : "end_turn";
    const sequence = why === "stop" ? stops.find((s) => text.slice(at).startsWith(s)) : null;
    return {
      id: "msg_x",
      type: "message",
      role: "assistant",
      model: body.model,
      content: [{ type: "text", text: out }],
      stop_reason: stop,
      stop_sequence: sequence ?? null,
      usage: { input_tokens: 10, output_tokens: out.length },
    };
  }
  return {
    candidates: [{ content: { role: "model", parts: [{ text: out }] }, finishReason: why === "cut" ? "MAX_TOKENS" : "STOP", index: 0 }],
    usageMetadata: { promptTokenCount: 10, candidatesTokenCount: out.length, totalTokenCount: 10 + out.length },
    modelVersion: "gemini",
  };
};

function request(api: Route, order: string, email: string, limit: number, stops: string[] = []): Body {
  if (api === "chat" || api === "gemini-openai")
    return {
      max_tokens: limit,
      ...(stops.length > 0 ? { stop: stops } : {}),
      messages: [
        { role: "system", content: SYSTEM },
        { role: "user", content: ask(order, email) },
      ],
    };
  if (api === "anthropic")
    return {
      max_tokens: limit,
      system: SYSTEM,
      ...(stops.length > 0 ? { stop_sequences: stops } : {}),
      messages: [{ role: "user", content: ask(order, email) }],
    };
  return {
    systemInstruction: { parts: [{ text: SYSTEM }] },
    generationConfig: { maxOutputTokens: limit, ...(stops.length > 0 ? { stopSequences: stops } : {}) },
    contents: [{ role: "user", parts: [{ text: ask(order, email) }] }],
  };
}

/** The text the model answers a request with, as the Worker serves it. */
function textOf(api: Route, text: string): string {
  const body = JSON.parse(text) as {
    content?: Array<{ text: string }>;
    candidates?: Array<{ content: { parts: Array<{ text: string }> } }>;
    choices?: Array<{ message: { content: string } }>;
  };
  if (api === "chat" || api === "gemini-openai") return body.choices?.[0]?.message.content ?? "";
  return api === "anthropic" ? (body.content?.[0]?.text ?? "") : (body.candidates?.[0]?.content.parts[0]?.text ?? "");
}

/** Teaches the three orders under one token limit and stop sequences; returns the tree's key and model. */
async function taught(api: Route, limit: number, stops: string[] = []) {
  const key = newKey();
  const model = uniqueModel(`hview-cut-${api}`);
  await teach(
    api,
    key,
    model,
    ORDERS.map(([o, e]) => request(api, o, e, limit, stops)),
  );
  return { key, model };
}

const LONG = "danielverylongname@example.io";

describe.each(["anthropic", "gemini", "chat", "gemini-openai"] as const)("where the model stops, on %s", (api) => {
  it("Should not serve a template learned from answers cut by the token limit: another value cuts the answer elsewhere", async () => {
    const upstream = scriptModel(desk);
    const { key, model } = await taught(api, 60);
    const fourth = await served(api, key, model, request(api, FOURTH[0], LONG, 60));
    expect(textOf(api, fourth.text)).toBe(full(FOURTH[0], LONG).slice(0, 60));
    expect([fourth.cache, fourth.template]).toEqual(["miss", null]);
    expect(upstream.asked()).toBe(4);
  });

  it("Should not serve a template's answer that might not fit the token limit: a longer value is cut where the learned ones were not", async () => {
    const upstream = scriptModel(desk);
    // The three answers (92 characters) fit a limit of 100; the fourth's (106) does not.
    const { key, model } = await taught(api, 100);
    const fourth = await served(api, key, model, request(api, FOURTH[0], LONG, 100));
    expect(textOf(api, fourth.text)).toBe(full(FOURTH[0], LONG).slice(0, 100));
    expect([fourth.cache, fourth.template]).toEqual(["miss", null]);
    expect(fourth.miss).toMatch(/answer is not served: the answer might not fit the request's token limit \(100;/);
    expect(upstream.asked()).toBe(4);
  });

  it("Should not serve a template's answer that holds a stop sequence of the request: the model stops there", async () => {
    const upstream = scriptModel(desk);
    const { key, model } = await taught(api, 1024, ["404"]);
    // A fourth order that holds no stop sequence is served from the template (it was learned).
    const plain = await served(api, key, model, request(api, "E-5005", "eve@example.io", 1024, ["404"]));
    expect([plain.cache, plain.template !== null, textOf(api, plain.text)]).toEqual(["hit", true, full("E-5005", "eve@example.io")]);
    // D-4040 holds "404": the model stops inside it.
    const fourth = await served(api, key, model, request(api, "D-4040", FOURTH[1], 1024, ["404"]));
    expect(textOf(api, fourth.text)).toBe("Refunding order D-");
    expect([fourth.cache, fourth.template]).toEqual(["miss", null]);
    expect(fourth.miss).toMatch(/answer is not served: the answer holds the request's stop sequence "404"/);
    expect(upstream.asked()).toBe(4);
  });

  it("Should serve a new order the answer that stopped at a stop sequence, stopped there as the model stops it", async () => {
    const upstream = scriptModel(desk);
    const stops = ["The money"];
    const { key, model } = await taught(api, 1024, stops);
    const fourth = await served(api, key, model, request(api, ...FOURTH, 1024, stops));
    expect([fourth.cache, fourth.template !== null, textOf(api, fourth.text)]).toEqual(["hit", true, `Refunding order ${FOURTH[0]} for ${FOURTH[1]}. `]);
    if (api === "anthropic") expect(JSON.parse(fourth.text)).toMatchObject({ stop_reason: "stop_sequence", stop_sequence: "The money" });
    expect(upstream.asked()).toBe(3);
  });
});
