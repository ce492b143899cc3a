import { describe, expect, it } from "vitest";
import type { CanonicalMessage } from "../../src/core/messages";
import { CHAT_STOPS, stopsBefore, type StopRules } from "../../src/cache/templates/view";
import { anthropicTemplateView } from "../../src/providers/anthropic/template-view";
import { geminiTemplateView } from "../../src/providers/gemini/template-view";
import { responsesTemplateView } from "../../src/providers/responses/template-view";

/**
 * Review of session 18's stop rules (view.ts stopsBefore): token limits a careless client writes otherwise than a
 * positive JSON integer. Gemini reads its request as proto JSON, where an int32 may be sent as a string
 * (`"maxOutputTokens": "20"`): the model is held to 20 tokens, and a template's answer read as having no limit
 * was served whole where the model cuts it. A limit no rule reads (0, negative, a fraction, a word) is not
 * "no limit": the answer is not served (a miss), never assumed to fit.
 */
const text = "Refunding order D-4004 for dan@example.io."; // 42 bytes: 10 + 16 + 42 = 68 tokens at most
const answer: CanonicalMessage = { role: "assistant", content: [text] };
const stopsOf = (view: StopRules, frame: Record<string, unknown>) =>
  stopsBefore(view, JSON.stringify(frame), { finishReason: "stop", completionTokens: 10, message: answer });

describe("token limits written otherwise", () => {
  it("Should read Gemini's maxOutputTokens sent as a string (proto JSON) and refuse an answer that might not fit it", () => {
    for (const config of [{ generationConfig: { maxOutputTokens: "20" } }, { generation_config: { max_output_tokens: "20" } }])
      expect(stopsOf(geminiTemplateView, config)).toMatch(/token limit \(20;/);
    expect(stopsOf(geminiTemplateView, { generationConfig: { maxOutputTokens: "4096" } })).toBeNull();
  });

  it("Should serve no answer under a token limit it cannot read (0, negative, fractional, a word), on every view", () => {
    for (const bad of [0, -1, 12.5, "lots", true, {}]) {
      expect(stopsOf(CHAT_STOPS, { max_tokens: bad }), `chat ${JSON.stringify(bad)}`).toMatch(/might not fit/);
      expect(stopsOf(CHAT_STOPS, { max_completion_tokens: bad }), `chat ${JSON.stringify(bad)}`).toMatch(/might not fit/);
      expect(stopsOf(anthropicTemplateView, { max_tokens: bad }), `anthropic ${JSON.stringify(bad)}`).toMatch(/might not fit/);
      expect(stopsOf(responsesTemplateView, { max_output_tokens: bad }), `responses ${JSON.stringify(bad)}`).toMatch(/might not fit/);
      expect(stopsOf(geminiTemplateView, { generationConfig: { maxOutputTokens: bad } }), `gemini ${JSON.stringify(bad)}`).toMatch(/might not fit/);
    }
  });

  it("Should still read an absent or null limit as none, and a huge one as one the answer fits", () => {
    expect(stopsOf(CHAT_STOPS, { max_tokens: null, stop: null })).toBeNull();
    expect(stopsOf(CHAT_STOPS, {})).toBeNull();
    expect(stopsOf(CHAT_STOPS, { max_tokens: Number.MAX_SAFE_INTEGER })).toBeNull();
    expect(stopsOf(responsesTemplateView, { max_output_tokens: null })).toBeNull();
    expect(stopsOf(geminiTemplateView, { generationConfig: null })).toBeNull();
    expect(stopsOf(geminiTemplateView, { generationConfig: { maxOutputTokens: null } })).toBeNull();
  });
});

describe("a stop sequence across the end of the answer", () => {
  const said = (text: string): CanonicalMessage => ({ role: "assistant", content: [text] });
  const stopsAt = (view: StopRules, frame: Record<string, unknown>, text: string) =>
    stopsBefore(view, JSON.stringify(frame), { finishReason: "stop", completionTokens: 10, message: said(text) });

  it("Should refuse an answer whose new value at its end, followed by the stop sequence it stopped at, starts another stop sequence", () => {
    // Learned on D-4042 (the model stopped at "\nObservation:"); for D-4041 it stops at "1\n", before the value's last digit.
    const stops = ["\nObservation:", "1\n"];
    expect(stopsAt(anthropicTemplateView, { stop_sequences: stops }, "Action: refund\nAction Input: D-4041")).toMatch(/stop sequence after it .*"1\\n"/);
    expect(stopsAt(CHAT_STOPS, { stop: stops }, "Action: refund\nAction Input: D-4041")).toMatch(/stop sequence after it/);
    expect(stopsAt(geminiTemplateView, { generationConfig: { stopSequences: stops } }, "Action: refund\nAction Input: D-4041")).toMatch(
      /stop sequence after it/,
    );
    expect(stopsAt(anthropicTemplateView, { stop_sequences: stops }, "Action: refund\nAction Input: D-4042")).toBeNull();
    // One stop sequence alone never starts before itself.
    expect(stopsAt(anthropicTemplateView, { stop_sequences: ["\nObservation:"] }, "Action Input: D-4041")).toBeNull();
  });
});
