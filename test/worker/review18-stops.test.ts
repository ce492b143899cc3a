import { afterEach, describe, expect, it, vi } from "vitest";
import { newKey } from "./api-helpers";
import { uniqueModel } from "./helpers";
import { ask, FOURTH, type Model, ORDERS, orderOf, scriptModel, served, teach } from "./templates-views-hunt.support";

/**
 * Review of session 18's stop rules through the Worker: native Gemini reads its request as proto JSON, where an
 * int32 may be sent as a string. `"maxOutputTokens": "100"` holds the model to 100 tokens; a template's answer
 * read as having no limit was served whole where the model cuts it (view.ts limitOf).
 */
afterEach(() => vi.restoreAllMocks());

type Body = Record<string, unknown>;
const SYSTEM = "You are the refund desk. Say what you refund.";
const full = (o: string, e: string) => `Refunding order ${o} for ${e}. The money is back on your card within five days.`;
/** The scripted Gemini reads its token limit as characters (each a token), a string of digits as its number. */
const desk: Model = (_api, body) => {
  const { order_id, email } = orderOf(body);
  const text = full(order_id, email);
  const limit = Number((body.generationConfig as Body).maxOutputTokens);
  const out = text.slice(0, limit);
  return {
    candidates: [{ content: { role: "model", parts: [{ text: out }] }, finishReason: text.length > limit ? "MAX_TOKENS" : "STOP", index: 0 }],
    usageMetadata: { promptTokenCount: 10, candidatesTokenCount: out.length, totalTokenCount: 10 + out.length },
    modelVersion: "gemini",
  };
};
const request = (order: string, email: string): Body => ({
  systemInstruction: { parts: [{ text: SYSTEM }] },
  generationConfig: { maxOutputTokens: "100" },
  contents: [{ role: "user", parts: [{ text: ask(order, email) }] }],
});
const LONG = "danielverylongname@example.io";

describe("a token limit sent as a string", () => {
  it("Should not serve a native Gemini template's answer that might not fit maxOutputTokens sent as a string: the model cuts it", async () => {
    const upstream = scriptModel(desk);
    const key = newKey();
    const model = uniqueModel("review18-gemini-limit");
    // The three answers (92 characters) fit a limit of 100; the fourth's (106) does not.
    await teach(
      "gemini",
      key,
      model,
      ORDERS.map(([o, e]) => request(o, e)),
    );
    const fourth = await served("gemini", key, model, request(FOURTH[0], LONG));
    const text = (JSON.parse(fourth.text) as { candidates: Array<{ content: { parts: Array<{ text: string }> } }> }).candidates[0].content.parts[0].text;
    expect(text).toBe(full(FOURTH[0], LONG).slice(0, 100));
    expect([fourth.cache, fourth.template]).toEqual(["miss", null]);
    expect(fourth.miss).toMatch(/might not fit the request's token limit \(100;/);
    expect(upstream.asked()).toBe(4);
  });
});

describe("a stop sequence across the end of a template's answer", () => {
  const STOPS = ["\nObservation:", "4\n"];
  /** A ReAct desk on Anthropic: it writes the order and an observation, and stops at the first stop sequence its text holds. */
  const react: Model = (_api, body) => {
    const { order_id, email } = orderOf(body);
    const text = `Refunding ${email}'s order ${order_id}\nObservation: refunded`;
    const [at, sequence] = STOPS.map((s) => [text.indexOf(s), s] as const)
      .filter(([i]) => i >= 0)
      .sort((a, b) => a[0] - b[0])[0];
    return {
      id: "msg_x",
      type: "message",
      role: "assistant",
      model: body.model,
      content: [{ type: "text", text: text.slice(0, at) }],
      stop_reason: "stop_sequence",
      stop_sequence: sequence,
      usage: { input_tokens: 10, output_tokens: at },
    };
  };
  const request = (order: string, email: string): Body => ({
    max_tokens: 1024,
    system: SYSTEM,
    stop_sequences: STOPS,
    messages: [{ role: "user", content: ask(order, email) }],
  });

  it("Should not serve D-4004 the answer learned where the model stopped at \\nObservation:, when 4\\n starts in its value", async () => {
    const upstream = scriptModel(react);
    const key = newKey();
    const model = uniqueModel("review18-stop-across");
    await teach(
      "anthropic",
      key,
      model,
      ORDERS.map(([o, e]) => request(o, e)),
    );
    // E-5005 is served (the template was learned, stopped where the model stops).
    const plain = await served("anthropic", key, model, request("E-5005", "eve@example.io"));
    expect([plain.cache, (JSON.parse(plain.text) as { content: Array<{ text: string }> }).content[0].text]).toEqual([
      "hit",
      "Refunding eve@example.io's order E-5005",
    ]);
    const fourth = await served("anthropic", key, model, request(...FOURTH));
    expect((JSON.parse(fourth.text) as { content: Array<{ text: string }> }).content[0].text).toBe(`Refunding ${FOURTH[1]}'s order D-400`);
    expect([fourth.cache, fourth.template]).toEqual(["miss", null]);
    expect(fourth.miss).toMatch(/a stop sequence after it hold the request's stop sequence "4\\n"/);
    expect(upstream.asked()).toBe(4);
  });
});
