import fc from "fast-check";
import { canonicalJson } from "../../src/core/canonical";
import { walk } from "../../src/core/hash";
import type { CanonicalMessage } from "../../src/core/messages";
import { weigh } from "../../src/cache/templates/evidence";
import { induce, shapeKeyOf, type LearnedTemplate, type Trajectory } from "../../src/cache/templates/induce";
import { decompose } from "../../src/cache/templates/leaves";
import { lookupKeys, skeletonDigests } from "../../src/cache/templates/learned";
import { serveLearned } from "../../src/cache/templates/serve";

const ROOT = "root";
const meta = { finishReason: "tool_calls", promptTokens: 20, completionTokens: 5, latencyMs: 80 };

/** A decision the model makes on a value it never copies: a lookup table, a parity rule, a set membership. */
export type Rule = { kind: "table"; table: Record<string, string> } | { kind: "parity"; modulus: number } | { kind: "set"; members: string[] };

export const CITIES = ["Paris", "Rome", "Berlin", "Madrid", "Oslo", "Vienna", "Dublin", "Lisbon", "Sydney", "Lima"];
export const STATUSES = ["Pending", "Reviewed", "Verified", "Flagged", "Disputed", "Escalated", "Cleared", "Frozen"];

export const ruleArb: fc.Arbitrary<Rule> = fc.oneof(
  fc
    .array(fc.constantFrom("north", "south", "east", "west"), { minLength: CITIES.length, maxLength: CITIES.length })
    .map((regions) => ({ kind: "table" as const, table: Object.fromEntries(CITIES.map((c, i) => [c, regions[i]])) })),
  fc.integer({ min: 2, max: 3 }).map((modulus) => ({ kind: "parity" as const, modulus })),
  fc.subarray(STATUSES, { minLength: 1, maxLength: STATUSES.length - 1 }).map((members) => ({ kind: "set" as const, members })),
);

/** One request of a workflow: an id the answer copies, and the value the rule decides on. */
export interface Case {
  id: string;
  value: string;
}

export function caseArb(rule: Rule): fc.Arbitrary<Case> {
  const id = fc.integer({ min: 1000, max: 99_999 }).map((n) => `A-${n}`);
  const value =
    rule.kind === "table" ? fc.constantFrom(...CITIES) : rule.kind === "parity" ? fc.integer({ min: 10, max: 999 }).map(String) : fc.constantFrom(...STATUSES);
  return fc.record({ id, value });
}

/** The verdict: a word the answer holds that is never a copy of the value it rests on. */
function verdict(rule: Rule, value: string): string {
  if (rule.kind === "table") return rule.table[value];
  if (rule.kind === "parity") return Number(value) % rule.modulus === 0 ? "approve" : "hold";
  return rule.members.includes(value) ? "approved" : "refused";
}

/**
 * The request (system, user; with `lookup`, also a tool call that copies the id
 * and its result) and the model's answer: `decide({"id": <copied>, "verdict": <decided>})`;
 * with `copyValue`, the answer copies the value it decides on too.
 */
export function trajectoryOf(rule: Rule, c: Case, lookup: boolean, copyValue = false): Trajectory {
  const label = rule.kind === "table" ? "city" : rule.kind === "parity" ? "ticket" : "status";
  const messages: CanonicalMessage[] = [
    { role: "system", content: "Decide each case. Answer with the decide tool." },
    { role: "user", content: `Case ${c.id}: ${label} ${c.value}.` },
  ];
  if (lookup) {
    messages.push(
      { role: "assistant", tool_calls: [{ id: "call_0", type: "function", function: { name: "lookup", arguments: canonicalJson({ id: c.id }) } }] },
      { role: "tool", tool_call_id: "call_0", content: canonicalJson({ found: true }) },
    );
  }
  const answer: CanonicalMessage = {
    role: "assistant",
    tool_calls: [
      {
        id: `call_${lookup ? 1 : 0}`,
        type: "function",
        function: { name: "decide", arguments: canonicalJson({ id: c.id, verdict: verdict(rule, c.value), ...(copyValue ? { value: c.value } : {}) }) },
      },
    ],
  };
  return { root: ROOT, hashes: walk(ROOT, messages).map((s) => s.hash), messages, answer, meta };
}

/**
 * A model of the tree's learner and server over the pure domain, the way the
 * Worker runs them (src/store/templates/learn.ts, src/engine/templates.ts):
 * each request is served by learned templates when they fit, else the model
 * answers and the answer is learned from (weighed against the templates under
 * its lookup keys; when none confirms, paired with up to four recent answers
 * of its shape). Returns how many requests were served and how many of those
 * differ from the model's own answer.
 */
export function simulate(trajectories: readonly Trajectory[], minBindings = 3): { served: number; wrong: number } {
  let templates: LearnedTemplate[] = [];
  const byShape = new Map<string, Trajectory[]>();
  let served = 0;
  let wrong = 0;
  for (const t of trajectories) {
    const parts = t.messages.map(decompose);
    const keys = lookupKeys(t.root, t.hashes, skeletonDigests(parts));
    const candidates = templates
      .filter((x) => !x.state.refuted && keys.some((k) => k.key === x.lookupKey))
      .sort((a, b) => b.pattern.anchorDepth - a.pattern.anchorDepth || b.state.bindings.length - a.state.bindings.length)
      .slice(0, 8);
    const hit = serveLearned(candidates, parts, minBindings);
    if (hit) {
      served++;
      if (canonicalJson(hit.message) !== canonicalJson(t.answer)) wrong++;
      continue;
    }
    const known = templates.filter((x) => !x.state.refuted && keys.some((k) => k.key === x.lookupKey));
    let confirmed = false;
    for (const template of known) {
      const { outcome, state } = weigh(template, t, parts.slice(template.pattern.anchorDepth));
      if (outcome !== "unrelated") template.state = state;
      if (outcome === "confirmed") confirmed = true;
    }
    const shape = shapeKeyOf(t);
    const partners = (byShape.get(shape) ?? [])
      .filter((p) => canonicalJson(p.messages) !== canonicalJson(t.messages) || canonicalJson(p.answer) !== canonicalJson(t.answer))
      .slice(0, 4);
    if (!confirmed) {
      for (const partner of partners) {
        const template = induce(t, partner);
        if (!template || templates.some((x) => x.id === template.id)) continue;
        for (const other of partners) {
          if (other === partner || template.state.refuted) continue;
          const { outcome, state } = weigh(template, other);
          if (outcome !== "unrelated") template.state = state;
        }
        templates = [...templates, template];
      }
    }
    byShape.set(shape, [t, ...(byShape.get(shape) ?? [])]);
  }
  return { served, wrong };
}
