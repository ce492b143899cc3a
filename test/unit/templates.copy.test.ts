import { describe, expect, it } from "vitest";
import { walk } from "../../src/core/hash";
import type { CanonicalMessage } from "../../src/core/messages";
import { weigh } from "../../src/cache/templates/evidence";
import { induce, type LearnedTemplate, type Trajectory } from "../../src/cache/templates/induce";
import { decompose } from "../../src/cache/templates/leaves";
import { bind, isConfirmed, lookupKeys, rejectReason, renderAnswer, skeletonDigests } from "../../src/cache/templates/learned";

const ROOT = "root";
const meta = { finishReason: "stop", promptTokens: 10, completionTokens: 2, latencyMs: 50 };

/** A one-question conversation and the model's answer. */
function ask(system: string, question: string, answer: string): Trajectory {
  const messages: CanonicalMessage[] = [
    { role: "system", content: system },
    { role: "user", content: question },
  ];
  return { root: ROOT, hashes: walk(ROOT, messages).map((s) => s.hash), messages, answer: { role: "assistant", content: answer }, meta };
}

/** Learns from the trajectories in order, as the learner does (induce from the first two, weigh the rest). */
function learnAll(ts: Trajectory[]): LearnedTemplate | null {
  const t = induce(ts[0], ts[1]);
  if (!t) return null;
  for (const other of ts.slice(2)) t.state = weigh(t, other).state;
  return t;
}

/** What a learned template serves for a request, the way the Worker serves it; null for a miss. */
function served(t: LearnedTemplate | null, request: Trajectory): CanonicalMessage | null {
  if (!t) return null;
  const parts = request.messages.map(decompose);
  const keys = lookupKeys(ROOT, request.hashes, skeletonDigests(parts)).map((x) => x.key);
  if (!keys.includes(t.lookupKey) || !isConfirmed(t.state, 3)) return null;
  const binding = bind(t.pattern, parts.slice(t.pattern.anchorDepth), t.state.slots.length);
  if (!binding || rejectReason(t.state.slots, binding)) return null;
  return renderAnswer(t.pattern, binding.values);
}

describe("learned templates vary a value only where an answer copies it", () => {
  it("Should not serve 'Yes.' for a fourth capitalised city the answer never copied", () => {
    const capital = (city: string) =>
      ask("Answer Yes. or No.", `Is ${city} a capital city?`, ["Paris", "Rome", "Berlin", "Madrid"].includes(city) ? "Yes." : "No.");
    const t = learnAll([capital("Paris"), capital("Rome"), capital("Berlin")]);
    expect(served(t, capital("Sydney"))).toBeNull();
  });

  it("Should not serve 'approved' for a capitalised status the answer never copied", () => {
    const decide = (status: string) =>
      ask("Approve or refuse the application.", `Application status: ${status}`, ["Pending", "Reviewed", "Verified"].includes(status) ? "approved" : "refused");
    const t = learnAll([decide("Pending"), decide("Reviewed"), decide("Verified")]);
    expect(served(t, decide("Flagged"))).toBeNull();
  });

  it("Should keep a capitalised verb structural when only the order id is copied ('Refund' never stands for 'Cancel')", () => {
    const order = (verb: string, id: string) => ask("Handle the customer's order request.", `${verb} order #${id}`, `Looking up order #${id}.`);
    // Verb and id both differ in the first pair: the verb is not copied, so no template at all.
    expect(learnAll([order("Refund", "A-1"), order("Cancel", "B-2"), order("Refund", "C-3")])).toBeNull();
    // Same verb: a template whose verb is a literal; another verb does not bind, whatever the id.
    const t = learnAll([order("Refund", "A-1"), order("Refund", "B-2"), order("Refund", "C-3")]);
    expect(served(t, order("Refund", "D-4"))).toEqual({ role: "assistant", content: "Looking up order #D-4." });
    expect(served(t, order("Cancel", "D-4"))).toBeNull();
    expect(served(t, order("Delete", "A-1"))).toBeNull();
  });

  it("Should not serve an answer for an in-range number the answer never copied (a parity rule)", () => {
    const even = (n: number) => ask("Say Yes. for even ticket numbers.", `Ticket number ${n}`, n % 2 === 0 ? "Yes." : "No.");
    const t = learnAll([even(12), even(20), even(16)]);
    expect(served(t, even(13))).toBeNull();
  });

  it("Should still serve a value the answer copies, inside the range seen", () => {
    const echo = (n: number) => ask("Confirm the ticket.", `Ticket number ${n}`, `Ticket ${n} confirmed.`);
    const t = learnAll([echo(12), echo(20), echo(16)]);
    expect(served(t, echo(14))).toEqual({ role: "assistant", content: "Ticket 14 confirmed." });
    expect(served(t, echo(25))).toBeNull();
  });

  it("Should count a copy by an earlier answer on the path (a tool call) as evidence, and a value only an answer holds as none", () => {
    const flow = (order: string, answer: string, said = order): Trajectory => {
      const messages: CanonicalMessage[] = [
        { role: "user", content: `Refund order ${order}` },
        { role: "assistant", tool_calls: [{ id: "call_0", type: "function", function: { name: "get_order", arguments: JSON.stringify({ order_id: said }) } }] },
        { role: "tool", tool_call_id: "call_0", content: "delivered" },
      ];
      return { root: ROOT, hashes: walk(ROOT, messages).map((s) => s.hash), messages, answer: { role: "assistant", content: answer }, meta };
    };
    const copied = learnAll([flow("A-1", "Refunded."), flow("B-22", "Refunded."), flow("C-333", "Refunded.")]);
    expect(served(copied, flow("D-4444", "Refunded."))).toEqual({ role: "assistant", content: "Refunded." });
    // The model's own earlier text is not an input it copied: the ids only ever appear in the assistant's call.
    const invented = (said: string) => flow("it", "Refunded.", said);
    expect(induce(invented("A-1"), invented("B-22"))).toBeNull();
  });
});
