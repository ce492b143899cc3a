import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../src/core/canonical";
import { RESPONSE_KEY, CHOICE_KEY } from "../../src/core/envelope";
import { walk } from "../../src/core/hash";
import type { CanonicalMessage } from "../../src/core/messages";
import { weigh } from "../../src/cache/templates/evidence";
import { induce, shapeKeyOf, type LearnedTemplate, type Trajectory } from "../../src/cache/templates/induce";
import { decompose } from "../../src/cache/templates/leaves";
import { renderAnswer } from "../../src/cache/templates/learned";
import { serveLearned } from "../../src/cache/templates/serve";

/**
 * An answer's envelope (the fields an OpenAI-compatible upstream sent around
 * the message, src/core/envelope.ts) describes the response, not what the
 * agent is told to do: Groq's `x_groq.id` differs on every response. Learned
 * templates must form, confirm and serve across answers whose envelopes
 * differ, and a template's answer carries a recorded envelope.
 */
const ROOT = "root";
const meta = { finishReason: "tool_calls", promptTokens: 10, completionTokens: 5, latencyMs: 100 };

function lookup(orderId: string, requestId: string): Trajectory {
  const messages: CanonicalMessage[] = [
    { role: "system", content: "Order desk." },
    { role: "user", content: `Where is order ${orderId}?` },
  ];
  const answer: CanonicalMessage = {
    role: "assistant",
    tool_calls: [{ id: "call_0", type: "function", function: { name: "get_order", arguments: canonicalJson({ order_id: orderId }) } }],
    [CHOICE_KEY]: { stop_reason: null },
    [RESPONSE_KEY]: { x_groq: { id: requestId } },
  };
  return { root: ROOT, hashes: walk(ROOT, messages).map((s) => s.hash), messages, answer, meta };
}

function confirmed(): LearnedTemplate {
  const t = induce(lookup("A-1001", "req_01a"), lookup("B-2002", "req_01b"));
  expect(t).not.toBeNull();
  const third = weigh(t!, lookup("C-3003", "req_01c"));
  expect(third.outcome).toBe("confirmed");
  return { ...t!, state: third.state };
}

describe("learned templates and the answer's envelope", () => {
  it("Should group and pair answers whose envelopes differ (Groq's x_groq.id on every response)", () => {
    const a = lookup("A-1001", "req_01a");
    const b = lookup("B-2002", "req_01b");
    expect(shapeKeyOf(a)).toBe(shapeKeyOf(b));
    expect(decompose(a.answer).skeleton).not.toContain("req_01a");
    expect(induce(a, b)).not.toBeNull();
  });

  it("Should confirm a template by an answer with another envelope, and serve the message with a recorded envelope", () => {
    const t = confirmed();
    const request = lookup("D-4004", "req_01d");
    const served = serveLearned([t], request.messages.map(decompose), 3);
    expect(served).not.toBeNull();
    const { [RESPONSE_KEY]: envelope, ...message } = served!.message;
    const { [RESPONSE_KEY]: _, ...truth } = request.answer;
    // The choice's stop_reason, which both answers sent, is served (in `message`); x_groq.id differed between them, so it is not (test/unit/templates.learned-envelope.test.ts).
    expect(message).toEqual(truth);
    expect(envelope).toBeUndefined();
  });

  it("Should still refute a template whose message the model contradicts, whatever the envelope", () => {
    const t = confirmed();
    const other = lookup("E-5005", "req_01e");
    other.answer = {
      ...other.answer,
      tool_calls: [{ id: "call_0", type: "function", function: { name: "escalate", arguments: canonicalJson({ order_id: "E-5005" }) } }],
    };
    expect(weigh(t, other).outcome).toBe("refuted");
  });

  it("Should serve when two fitting templates render one message with different envelopes", () => {
    const t1 = confirmed();
    const t2: LearnedTemplate = {
      ...t1,
      id: "other",
      pattern: { ...t1.pattern, answer: { ...t1.pattern.answer, envelope: { [RESPONSE_KEY]: { x_groq: { id: "req_09" } } } } },
    };
    const request = lookup("D-4004", "req_01d");
    expect(serveLearned([t1, t2], request.messages.map(decompose), 3)).not.toBeNull();
    expect(renderAnswer(t2.pattern, ["D-4004"])?.[RESPONSE_KEY]).toEqual({ x_groq: { id: "req_09" } });
  });
});
