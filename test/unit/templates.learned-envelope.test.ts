import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../src/core/canonical";
import { CHOICE_KEY, ONCE_KEY, RESPONSE_KEY } from "../../src/core/envelope";
import { walk } from "../../src/core/hash";
import type { CanonicalMessage } from "../../src/core/messages";
import { weigh } from "../../src/cache/templates/evidence";
import { induce, type LearnedTemplate, type Trajectory } from "../../src/cache/templates/induce";
import { decompose } from "../../src/cache/templates/leaves";
import { serveLearned } from "../../src/cache/templates/serve";

/**
 * A learned template serves one answer for many bindings, so the envelope it serves must hold
 * for every binding. Fields an upstream computes from this prompt or these tokens (vLLM's
 * `prompt_logprobs`, which decodes the prompt, Together's echoed `prompt`, logprobs) differ between
 * the two answers a template is learned from; served from the first, they describe another
 * customer's request. Only what both answers agree on is served.
 */
const ROOT = "root";
const meta = { finishReason: "tool_calls", promptTokens: 10, completionTokens: 5, latencyMs: 100 };

function lookup(orderId: string): Trajectory {
  const messages: CanonicalMessage[] = [
    { role: "system", content: "Order desk." },
    { role: "user", content: `Where is order ${orderId}?` },
  ];
  const answer: CanonicalMessage = {
    role: "assistant",
    tool_calls: [{ id: "call_0", type: "function", function: { name: "get_order", arguments: canonicalJson({ order_id: orderId }) } }],
    [CHOICE_KEY]: { stop_reason: null, logprobs: { content: [{ token: orderId, logprob: -0.1 }] } },
    [RESPONSE_KEY]: {
      service_tier: "default",
      prompt_logprobs: [null, { "7": { decoded_token: orderId, logprob: -2 } }],
      prompt: [{ text: `Where is order ${orderId}?` }],
      x_groq: { id: `req_${orderId}` },
    },
    [ONCE_KEY]: ["x_groq", "prompt_logprobs"],
  };
  return { root: ROOT, hashes: walk(ROOT, messages).map((s) => s.hash), messages, answer, meta };
}

function confirmed(): LearnedTemplate {
  const t = induce(lookup("A-1001"), lookup("B-2002"));
  expect(t).not.toBeNull();
  const third = weigh(t!, lookup("C-3003"));
  expect(third.outcome).toBe("confirmed");
  return { ...t!, state: third.state };
}

describe("the envelope a learned template serves", () => {
  it("Should serve no envelope field that differed between the answers it was learned from, and keep those they agree on", () => {
    const served = serveLearned([confirmed()], lookup("D-4004").messages.map(decompose), 3);
    expect(served).not.toBeNull();
    const message = served!.message;
    expect(JSON.stringify(message)).not.toContain("A-1001");
    expect(message[RESPONSE_KEY]).toEqual({ service_tier: "default" });
    expect(message[CHOICE_KEY]).toEqual({ stop_reason: null });
    expect(message[ONCE_KEY]).toBeUndefined();
  });
});
