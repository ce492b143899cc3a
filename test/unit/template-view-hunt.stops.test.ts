import { describe, expect, it } from "vitest";
import type { CanonicalMessage } from "../../src/core/messages";
import { stopsBefore } from "../../src/cache/templates/view";
import { anthropicTemplateView } from "../../src/providers/anthropic/template-view";
import { geminiTemplateView } from "../../src/providers/gemini/template-view";
import { responsesTemplateView } from "../../src/providers/responses/template-view";

/**
 * Where the model stops (view.ts stopsBefore): a template's rendered answer is served only when the model would
 * have stopped where the learned answers did. An answer the token limit cut stops elsewhere with values of
 * another length (test/worker/templates-views-hunt.cut.test.ts shows the wrong serve through the Worker); a
 * rendered answer holding a stop sequence of the request would have ended before it. This reads templates
 * learned before cut answers were left out of learning too: the serve refuses them.
 */

const answer = (texts: string[], args: string[] = []): CanonicalMessage => ({
  role: "assistant",
  content: texts,
  ...(args.length > 0 ? { tool_calls: args.map((a, i) => ({ id: `c${i}`, type: "function" as const, function: { name: "refund", arguments: a } })) } : {}),
});
const frame = (fields: Record<string, unknown>) => JSON.stringify(fields);

describe("stopsBefore on each view", () => {
  it("Should refuse an answer the token limit cut, on the API's own finish reason only", () => {
    expect(stopsBefore(anthropicTemplateView, frame({}), "max_tokens", answer(["Refunding"]))).toMatch(/cut by the token limit \(max_tokens\)/);
    expect(stopsBefore(geminiTemplateView, frame({}), "MAX_TOKENS", answer(["Refunding"]))).toMatch(/cut by the token limit \(MAX_TOKENS\)/);
    expect(stopsBefore(anthropicTemplateView, frame({}), "end_turn", answer(["Refunding"]))).toBeNull();
    expect(stopsBefore(anthropicTemplateView, frame({}), "stop_sequence:END", answer(["Refunding"]))).toBeNull();
    expect(stopsBefore(geminiTemplateView, frame({}), "STOP", answer(["Refunding"]))).toBeNull();
    expect(stopsBefore(responsesTemplateView, frame({}), "stop", answer(["Refunding"]))).toBeNull();
  });

  it("Should refuse an Anthropic answer whose text, texts joined or call arguments hold a stop sequence", () => {
    const f = frame({ stop_sequences: ["404", "\n\nHuman:"] });
    expect(stopsBefore(anthropicTemplateView, f, "end_turn", answer(["Order D-4040."]))).toMatch(/stop sequence "404"/);
    expect(stopsBefore(anthropicTemplateView, f, "end_turn", answer(["Order D-40", "40."]))).toMatch(/stop sequence "404"/);
    expect(stopsBefore(anthropicTemplateView, f, "tool_use", answer([], ['{"order_id":"D-4040"}']))).toMatch(/stop sequence "404"/);
    expect(stopsBefore(anthropicTemplateView, f, "end_turn", answer(["Order D-5050.\n\nHuman: hi"]))).toMatch(/stop sequence/);
    expect(stopsBefore(anthropicTemplateView, f, "end_turn", answer(["Order D-5050."], ['{"order_id":"D-5050"}']))).toBeNull();
  });

  it("Should read Gemini's stop sequences under both field names and refuse an answer holding one", () => {
    for (const config of [{ generationConfig: { stopSequences: ["404"] } }, { generation_config: { stop_sequences: ["404"] } }])
      expect(stopsBefore(geminiTemplateView, frame(config), "STOP", answer(["Order D-4040."]))).toMatch(/stop sequence "404"/);
    expect(stopsBefore(geminiTemplateView, frame({ generationConfig: { stopSequences: ["404"] } }), "STOP", answer(["Order D-5050."]))).toBeNull();
  });

  it("Should ignore an empty stop sequence and refuse when the frame cannot be read", () => {
    expect(stopsBefore(anthropicTemplateView, frame({ stop_sequences: [""] }), "end_turn", answer(["Order"]))).toBeNull();
    expect(stopsBefore(anthropicTemplateView, "{not json", "end_turn", answer(["Order"]))).toMatch(/could not be read/);
  });
});
