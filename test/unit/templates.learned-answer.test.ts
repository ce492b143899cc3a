import { describe, expect, it } from "vitest";
import { canonicalJson, ToolCallIds } from "../../src/core/canonical";
import { childHash, walk } from "../../src/core/hash";
import type { CanonicalMessage } from "../../src/core/messages";
import type { RequestKey } from "../../src/cache/request-key";
import { weigh } from "../../src/cache/templates/evidence";
import { induce, type LearnedTemplate, type Trajectory } from "../../src/cache/templates/induce";
import { learnedAnswer, learnedLookup } from "../../src/cache/templates/learned-answer";

const ROOT = "f".repeat(32);
const meta = { finishReason: "tool_calls", promptTokens: 10, completionTokens: 5, latencyMs: 100 };

interface Order {
  id: string;
  cents: number;
}

function messagesOf(c: Order): CanonicalMessage[] {
  return [
    { role: "system", content: "Refund desk. Limit 50000 cents." },
    { role: "user", content: `Please refund order ${c.id}.` },
    { role: "assistant", tool_calls: [{ id: "call_0", type: "function", function: { name: "get_order", arguments: canonicalJson({ order_id: c.id }) } }] },
    { role: "tool", tool_call_id: "call_0", content: JSON.stringify({ order_id: c.id, status: "delivered", amount_cents: c.cents }) },
  ];
}

function refund(c: Order): Trajectory {
  const messages = messagesOf(c);
  const answer: CanonicalMessage = {
    role: "assistant",
    tool_calls: [{ id: "call_1", type: "function", function: { name: "refund", arguments: JSON.stringify({ order_id: c.id, amount_cents: c.cents }) } }],
  };
  return { root: ROOT, hashes: walk(ROOT, messages).map((s) => s.hash), messages, answer, meta };
}

/** The request key of a refund request, as the Worker keys it (its tree is ROOT). */
function keyOf(c: Order): RequestKey {
  const path = walk(ROOT, messagesOf(c));
  return { tenant: "t", namespace: "default", treeId: ROOT, frameJson: "{}", model: "m", path, key: path[path.length - 1].hash, ids: new ToolCallIds() };
}

function learned(...cases: Order[]): LearnedTemplate {
  const t = induce(refund(cases[0]), refund(cases[1]));
  if (!t) throw new Error("no template");
  for (const c of cases.slice(2)) t.state = weigh(t, refund(c)).state;
  return t;
}

const ada = { id: "A-1001", cents: 1999 };
const bob = { id: "B-2002", cents: 4500 };
const cyd = { id: "C-3003", cents: 3000 };
const dan = { id: "D-4004", cents: 2500 };

describe("learnedLookup", () => {
  it("Should name the lookup key the template was learned under", () => {
    const template = learned(ada, bob, cyd);
    expect(learnedLookup(keyOf(dan)).keys).toContain(template.lookupKey);
  });
});

describe("learnedAnswer", () => {
  it("Should render a confirmed template's answer under h_n, with its bindings as observations", () => {
    const template = learned(ada, bob, cyd);
    const key = keyOf(dan);
    const found = learnedAnswer(key, learnedLookup(key), [template], 3);
    const expected: CanonicalMessage = {
      role: "assistant",
      tool_calls: [{ id: "call_1", type: "function", function: { name: "refund", arguments: JSON.stringify({ order_id: dan.id, amount_cents: dan.cents }) } }],
    };
    expect(found?.template).toBe(template.id);
    expect(canonicalJson(found?.answer.message)).toBe(canonicalJson(expected));
    expect(found?.answer).toMatchObject({
      hash: childHash(key.key, canonicalJson(found?.answer.message)),
      observations: template.state.bindings.length,
      finishReason: "tool_calls",
      promptTokens: 10,
      completionTokens: 5,
      latencyMs: 100,
    });
  });

  it("Should miss when the template has fewer bindings than asked for", () => {
    const template = learned(ada, bob, cyd);
    const key = keyOf(dan);
    expect(learnedAnswer(key, learnedLookup(key), [template], template.state.bindings.length + 1)).toBeNull();
  });

  it("Should miss with no candidates", () => {
    const key = keyOf(dan);
    expect(learnedAnswer(key, learnedLookup(key), [], 3)).toBeNull();
  });
});
