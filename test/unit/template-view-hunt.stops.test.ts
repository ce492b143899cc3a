import { describe, expect, it } from "vitest";
import type { CanonicalMessage } from "../../src/core/messages";
import { CHAT_STOPS, stopsBefore, type StopRules } from "../../src/cache/templates/view";
import { anthropicTemplateView } from "../../src/providers/anthropic/template-view";
import { geminiTemplateView } from "../../src/providers/gemini/template-view";
import { responsesTemplateView } from "../../src/providers/responses/template-view";

/**
 * Where the model stops (view.ts stopsBefore): a template's rendered answer is served only when the model would
 * have stopped where the learned answers did. An answer the token limit cut stops elsewhere with values of
 * another length (test/worker/templates-views-hunt.cut.test.ts shows the wrong serve through the Worker); a
 * rendered answer holding a stop sequence of the request would have ended before it, and one that might not fit
 * the request's token limit could have been cut. This reads templates learned before cut answers were left out
 * of learning too: the serve refuses them.
 */

const answer = (texts: string[], args: string[] = []): CanonicalMessage => ({
  role: "assistant",
  content: texts,
  ...(args.length > 0 ? { tool_calls: args.map((a, i) => ({ id: `c${i}`, type: "function" as const, function: { name: "refund", arguments: a } })) } : {}),
});
const frame = (fields: Record<string, unknown>) => JSON.stringify(fields);
/** stopsBefore for a learned answer that ended with `finishReason` after `completionTokens` output tokens. */
const stopsOf = (view: StopRules, frameJson: string, finishReason: string, message: CanonicalMessage, completionTokens = 10) =>
  stopsBefore(view, frameJson, { finishReason, completionTokens, message });

describe("stopsBefore on each view", () => {
  it("Should refuse an answer the token limit cut, on the API's own finish reason only", () => {
    expect(stopsOf(anthropicTemplateView, frame({}), "max_tokens", answer(["Refunding"]))).toMatch(/cut by the token limit \(max_tokens\)/);
    expect(stopsOf(geminiTemplateView, frame({}), "MAX_TOKENS", answer(["Refunding"]))).toMatch(/cut by the token limit \(MAX_TOKENS\)/);
    expect(stopsOf(anthropicTemplateView, frame({}), "end_turn", answer(["Refunding"]))).toBeNull();
    expect(stopsOf(anthropicTemplateView, frame({}), "stop_sequence:END", answer(["Refunding"]))).toBeNull();
    expect(stopsOf(geminiTemplateView, frame({}), "STOP", answer(["Refunding"]))).toBeNull();
    expect(stopsOf(responsesTemplateView, frame({}), "stop", answer(["Refunding"]))).toBeNull();
  });

  it("Should refuse an Anthropic answer whose text, texts joined or call arguments hold a stop sequence", () => {
    const f = frame({ stop_sequences: ["404", "\n\nHuman:"] });
    expect(stopsOf(anthropicTemplateView, f, "end_turn", answer(["Order D-4040."]))).toMatch(/stop sequence "404"/);
    expect(stopsOf(anthropicTemplateView, f, "end_turn", answer(["Order D-40", "40."]))).toMatch(/stop sequence "404"/);
    expect(stopsOf(anthropicTemplateView, f, "tool_use", answer([], ['{"order_id":"D-4040"}']))).toMatch(/stop sequence "404"/);
    expect(stopsOf(anthropicTemplateView, f, "end_turn", answer(["Order D-5050.\n\nHuman: hi"]))).toMatch(/stop sequence/);
    expect(stopsOf(anthropicTemplateView, f, "end_turn", answer(["Order D-5050."], ['{"order_id":"D-5050"}']))).toBeNull();
  });

  it("Should read Gemini's stop sequences under both field names and refuse an answer holding one", () => {
    for (const config of [{ generationConfig: { stopSequences: ["404"] } }, { generation_config: { stop_sequences: ["404"] } }])
      expect(stopsOf(geminiTemplateView, frame(config), "STOP", answer(["Order D-4040."]))).toMatch(/stop sequence "404"/);
    expect(stopsOf(geminiTemplateView, frame({ generationConfig: { stopSequences: ["404"] } }), "STOP", answer(["Order D-5050."]))).toBeNull();
  });

  it("Should ignore an empty stop sequence and refuse when the frame cannot be read", () => {
    expect(stopsOf(anthropicTemplateView, frame({ stop_sequences: [""] }), "end_turn", answer(["Order"]))).toBeNull();
    expect(stopsOf(anthropicTemplateView, "{not json", "end_turn", answer(["Order"]))).toMatch(/could not be read/);
  });

  it("Should serve only an answer that certainly fits the request's token limit (learned tokens, slack and one per UTF-8 byte)", () => {
    const text = "Refunding order D-4004 for dan@example.io."; // 42 bytes
    const args = '{"order_id":"D-4004"}'; // 21 bytes
    // 10 learned tokens + 16 slack + 63 bytes = 89.
    expect(stopsOf(anthropicTemplateView, frame({ max_tokens: 89 }), "tool_use", answer([text], [args]))).toBeNull();
    expect(stopsOf(anthropicTemplateView, frame({ max_tokens: 88 }), "tool_use", answer([text], [args]))).toMatch(
      /might not fit the request's token limit \(88; up to 89/,
    );
    expect(stopsOf(anthropicTemplateView, frame({ max_tokens: 4096 }), "tool_use", answer([text], [args]), 4030)).toMatch(/might not fit/);
    // A character of several bytes counts them all (a token may be one byte of it).
    expect(stopsOf(anthropicTemplateView, frame({ max_tokens: 30 }), "end_turn", answer(["Zoë"]))).toBeNull();
    expect(stopsOf(anthropicTemplateView, frame({ max_tokens: 29 }), "end_turn", answer(["Zoë"]))).toMatch(/up to 30 tokens/);
    for (const config of [{ generationConfig: { maxOutputTokens: 20 } }, { generation_config: { max_output_tokens: 20 } }])
      expect(stopsOf(geminiTemplateView, frame(config), "STOP", answer([text]))).toMatch(/token limit \(20;/);
    expect(stopsOf(geminiTemplateView, frame({ generationConfig: { temperature: 0 } }), "STOP", answer([text]))).toBeNull();
    expect(stopsOf(responsesTemplateView, frame({ max_output_tokens: 20 }), "stop", answer([text]))).toMatch(/token limit \(20;/);
    expect(stopsOf(responsesTemplateView, frame({}), "stop", answer([text]))).toBeNull();
  });

  it("Should read chat's rules on the routes keyed as chat is: length, stop as a string or a list, max_tokens or max_completion_tokens", () => {
    expect(stopsOf(CHAT_STOPS, frame({}), "length", answer(["Refunding"]))).toMatch(/cut by the token limit \(length\)/);
    expect(stopsOf(CHAT_STOPS, frame({}), "stop", answer(["Refunding"]))).toBeNull();
    for (const stop of ["404", ["x", "404"]]) expect(stopsOf(CHAT_STOPS, frame({ stop }), "stop", answer(["Order D-4040."]))).toMatch(/stop sequence "404"/);
    expect(stopsOf(CHAT_STOPS, frame({ max_tokens: 20 }), "stop", answer(["Order D-4040."]))).toMatch(/token limit \(20;/);
    expect(stopsOf(CHAT_STOPS, frame({ max_tokens: 4096, max_completion_tokens: 30 }), "stop", answer(["Order D-4040."]))).toMatch(/token limit \(30;/);
    expect(stopsOf(CHAT_STOPS, frame({ max_completion_tokens: 4096 }), "tool_calls", answer([], ['{"order_id":"D-4040"}']))).toBeNull();
  });
});
