import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../src/core/canonical";
import { walk } from "../../src/core/hash";
import type { CanonicalMessage } from "../../src/core/messages";
import { induce, type Trajectory } from "../../src/cache/templates/induce";
import { induceEarlierTurns, type NodeMeta } from "../../src/cache/templates/turns";

const ROOT = "root";
const meta = { finishReason: "stop", promptTokens: 10, completionTokens: 5, latencyMs: 50 };
const answered: NodeMeta = { finishReason: "tool_calls", observations: 1, promptTokens: 10, completionTokens: 5, latencyMs: 50 };

const call = (id: string, name: string, args: Record<string, unknown>): CanonicalMessage => ({
  role: "assistant",
  tool_calls: [{ id, type: "function", function: { name, arguments: canonicalJson(args) } }],
});

/** A run at its last turn: the first answer looks the order up; only the final text copies the name and email (`copyName`). */
function run(c: { first: string; last: string; n: number; id: string }, copyName = true): Trajectory {
  const email = `${c.first.toLowerCase()}${c.n}@example.com`;
  const messages: CanonicalMessage[] = [
    { role: "system", content: "Refund desk." },
    { role: "user", content: `Hi, I'm ${c.first} ${c.last}, email ${email}. Refund order ${c.id}.` },
    call("call_0", "get_order", { order_id: c.id }),
    { role: "tool", tool_call_id: "call_0", content: canonicalJson({ status: "Delivered" }) },
  ];
  const answer: CanonicalMessage = { role: "assistant", content: copyName ? `Refunded ${c.id} for ${c.first} ${c.last} <${email}>.` : `Refunded ${c.id}.` };
  return { root: ROOT, hashes: walk(ROOT, messages).map((s) => s.hash), messages, answer, meta };
}

/** Node metadata of a run: message 2 (the lookup) is a recorded answer. */
const nodes = (t: Trajectory, recorded = true): Array<NodeMeta | undefined> => t.messages.map((m, i) => (i === 2 && recorded ? answered : undefined));

describe("later copies count for earlier turns", () => {
  const ada = run({ first: "Ada", last: "Lovelace", n: 42, id: "A-1001" });
  const grace = run({ first: "Grace", last: "Hopper", n: 7, id: "A-2002" });

  it("Should not template the first turn on its own: the lookup copies no name", () => {
    const first = (t: Trajectory): Trajectory => ({
      ...t,
      hashes: t.hashes.slice(0, 2),
      messages: t.messages.slice(0, 2),
      answer: t.messages[2],
      meta: { ...meta, finishReason: "tool_calls" },
    });
    expect(induce(first(ada), first(grace))).toBeNull();
  });

  it("Should template the first turn once a later answer of both runs copies the name and email", () => {
    const turns = induceEarlierTurns(ada, grace, nodes(ada), nodes(grace));
    expect(turns.map((x) => x.turn)).toEqual([2]);
    const [{ template, answers }] = turns;
    expect(template.pattern.answer.skeleton).toContain("get_order");
    expect(template.state.slots.map((s) => [s.type, s.copied])).toEqual([
      ["name", true],
      ["name", true],
      ["email", true],
      ["identifier", true],
    ]);
    expect(template.pattern.answer.finishReason).toBe("tool_calls");
    expect(answers).toEqual([ada.hashes[2], grace.hashes[2]]);
  });

  it("Should still make no template when no later answer copies the name (it may be decided on)", () => {
    const [a, b] = [run({ first: "Ada", last: "Lovelace", n: 42, id: "A-1001" }, false), run({ first: "Grace", last: "Hopper", n: 7, id: "A-2002" }, false)];
    expect(induceEarlierTurns(a, b, nodes(a), nodes(b))).toEqual([]);
  });

  it("Should use only earlier answers the model gave (recorded answers), never ones a client wrote or a template served", () => {
    expect(induceEarlierTurns(ada, grace, nodes(ada, false), nodes(grace))).toEqual([]);
  });
});
