import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../src/core/canonical";
import { walk } from "../../src/core/hash";
import type { CanonicalMessage } from "../../src/core/messages";
import { induce, type Trajectory } from "../../src/cache/templates/induce";
import { learnStep, type Partner } from "../../src/cache/templates/learn-step";
import { decompose } from "../../src/cache/templates/leaves";

const ROOT = "root";
const meta = { finishReason: "tool_calls", promptTokens: 10, completionTokens: 5, latencyMs: 100 };

/** A refund request for order `id` and the model's call, its arguments `args` (JSON text) when given. */
function refund(id: string, args = canonicalJson({ amount_cents: 100, order_id: id })): Trajectory {
  const messages: CanonicalMessage[] = [{ role: "user", content: `Please refund order ${id}.` }];
  const answer: CanonicalMessage = { role: "assistant", tool_calls: [{ id: "call_0", type: "function", function: { name: "refund", arguments: args } }] };
  return { root: ROOT, hashes: walk(ROOT, messages).map((s) => s.hash), messages, answer, meta };
}

const partner = (t: Trajectory, answerHash: string): Partner => ({ ...t, answerHash, nodes: t.messages.map(() => undefined) });

describe("learnStep skips what it cannot read and learns from the rest", () => {
  it("Should skip a partner whose answer holds 1e400 and induce with the next (was: the step threw)", () => {
    const t = refund("C-333");
    const bad = partner(refund("A-1", '{"amount_cents":1e400,"order_id":"A-1"}'), "bad");
    const good = partner(refund("B-22"), "good");
    const step = learnStep(t, t.messages.map(decompose), "new", [], [], [bad, good]);
    expect(step.skipped).toEqual([{ kind: "partner", id: "bad", reason: expect.stringMatching(/Infinity/) }]);
    expect(step.fresh).toHaveLength(1);
    expect(step.evidence.map((e) => e.answerHash)).toEqual(["new", "good"]);
  });

  it("Should skip a known template that cannot be weighed and weigh the others (was: the step threw)", () => {
    const template = induce(refund("A-1"), refund("B-22"));
    if (!template) throw new Error("no template");
    const damaged = { ...template, id: "damaged", pattern: { ...template.pattern, answer: { ...template.pattern.answer, skeleton: "{" } } };
    const t = refund("C-333");
    const step = learnStep(t, t.messages.map(decompose), "new", [], [damaged, template], []);
    expect(step.skipped).toEqual([{ kind: "template", id: "damaged", reason: expect.stringMatching(/JSON/) }]);
    expect(step.outcomes).toEqual(["confirmed"]);
    expect(step.evidence).toEqual([{ templateId: template.id, answerHash: "new" }]);
  });
});
