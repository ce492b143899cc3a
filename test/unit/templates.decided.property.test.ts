import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ChatBody } from "../../tools/scripted-model";
import { experiment, type Chat } from "../../tools/eval-workflows/run";
import { simulatedWorker } from "../../tools/eval-workflows/simulate";
import { between, FIRST, firstUser, LAST, lastToolResult, pick, say, toolCall, type Workflow } from "../../tools/eval-workflows/types";

/**
 * Generated workflows where a value is copied (names, an email, an order id,
 * an amount), transformed (cents written as units) or decided on (a word of a
 * small vocabulary: a status, a plan, a country, a place; capitalised or not;
 * copied into the answer or not; given by the user or by a tool). The
 * warm-up sees part of the vocabulary; the traps bring words never seen.
 * Whatever the workflow, no decision on an unseen word is ever served, and
 * nothing served differs from the model.
 */
const POOLS = [
  ["delivered", "returned", "damaged", "lost", "cancelled", "processing"],
  ["starter", "team", "business", "enterprise", "trial", "legacy"],
  ["germany", "france", "portugal", "brazil", "japan", "canada"],
  ["lisbon", "porto", "braga", "coimbra", "faro", "evora"],
];

interface Shape {
  vocab: string[];
  approve: boolean[];
  copyDecided: boolean;
  transform: boolean;
  fromTool: boolean;
  warmWords: number;
}

const shapeArb: fc.Arbitrary<Shape> = fc
  .record({
    pool: fc.constantFrom(...POOLS),
    capital: fc.boolean(),
    approve: fc.array(fc.boolean(), { minLength: 6, maxLength: 6 }),
    copyDecided: fc.boolean(),
    transform: fc.boolean(),
    fromTool: fc.boolean(),
    warmWords: fc.integer({ min: 3, max: 4 }),
  })
  // Three warm words the model acts on alike: the evidence a template over the word would be confirmed by.
  .map(({ pool, capital, approve, ...rest }) => ({
    ...rest,
    approve: [true, true, true, ...approve.slice(3)],
    vocab: pool.map((w) => (capital ? w[0].toUpperCase() + w.slice(1) : w)),
  }));

interface Case {
  first: string;
  last: string;
  email: string;
  id: string;
  word: string;
  cents: number;
}

function workflowOf(s: Shape): Workflow<Case> {
  const approves = (word: string) => s.approve[s.vocab.indexOf(word)];
  const script = (body: ChatBody) => {
    const user = firstUser(body);
    const [, first, last, email, id] = /I'm (\S+) (\S+), (\S+)\. Order (\S+)/.exec(user) ?? [];
    const tool = lastToolResult(body);
    if (!tool) return toolCall("lookup", { id });
    const word = String(s.fromTool ? tool.result.word : (/Kind (\S+)\./.exec(user)?.[1] ?? ""));
    if (tool.name === "lookup") {
      const cents = Number(tool.result.cents);
      if (!approves(word)) return say(`Refused ${id}${s.copyDecided ? ` (${word})` : ""}, ${first} ${last}.`);
      return toolCall("act", { id, cents, email, ...(s.copyDecided ? { kind: word } : {}) });
    }
    const cents = Number(tool.args.cents);
    return say(`Done ${id} for ${first} ${last} <${email}>: ${s.transform ? `${(cents / 100).toFixed(2)} USD` : `${cents} cents`}.`);
  };
  return {
    name: "generated",
    system: "Decide on the kind; act or refuse.",
    tools: [],
    kinds: s.vocab.slice(0, s.warmWords).map((w): [string, number] => [w, 1]),
    traps: s.vocab.slice(s.warmWords),
    makeCase(rng, kind) {
      const first = pick(rng, FIRST);
      return {
        first,
        last: pick(rng, LAST),
        email: `${first.toLowerCase()}${between(rng, 10, 999)}@example.com`,
        id: `A-${between(rng, 10000, 99999)}`,
        word: kind,
        cents: between(rng, 1000, 30000),
      };
    },
    userMessage: (c) => `Hi, I'm ${c.first} ${c.last}, ${c.email}. Order ${c.id}.${s.fromTool ? "" : ` Kind ${c.word}.`}`,
    execTool: (c, call) => (call.name === "lookup" ? { cents: c.cents, ...(s.fromTool ? { word: c.word } : {}) } : { ok: true }),
    script,
    bindingsOf: (c) => ({ name: `${c.first} ${c.last}`, email: c.email, order_id: c.id }),
  };
}

describe("no decided-on value is served for an unseen value (generated workflows)", () => {
  it("Should never serve a decision on an unseen word, and never differ from the model", { timeout: 120_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(shapeArb, fc.constantFrom("learned" as const, "declared" as const), fc.integer({ min: 1, max: 1000 }), async (shape, mode, seed) => {
        const wf = workflowOf(shape);
        const sim = simulatedWorker((body) => wf.script(body));
        const unseen = shape.vocab.slice(shape.warmWords);
        const decisionsServed: string[] = [];
        const chat: Chat = async (body, headers) => {
          const res = await sim.chat(body, headers);
          const b = body as ChatBody;
          const text = JSON.stringify(b.messages);
          // The decision is the answer to the lookup's result (4 messages).
          if (b.messages.length === 4 && res.headers.get("muscle-mem-cache") === "hit" && unseen.some((w) => text.includes(w))) decisionsServed.push(text);
          return res;
        };
        const r = await experiment(wf, "wf-gen", chat, { mode, warm: 9, fresh: 24, trapsPerKind: 2, seed, tag: "p" });
        expect(decisionsServed).toEqual([]);
        expect([...r.warm.mismatches, ...r.fresh.mismatches, ...r.traps.mismatches]).toEqual([]);
      }),
      { numRuns: 40 },
    );
  });

  it("Should still serve the copies of such a workflow (0 wrong is not for want of serving)", async () => {
    const wf = workflowOf({ vocab: POOLS[0], approve: [true, true, true, true, true, true], copyDecided: true, transform: true, fromTool: true, warmWords: 2 });
    const sim = simulatedWorker((body) => wf.script(body));
    const r = await experiment(wf, "wf-gen", sim.chat, { mode: "learned", warm: 8, fresh: 30, trapsPerKind: 1, seed: 3, tag: "q" });
    expect(r.fresh.served.learned).toBeGreaterThan(0);
    expect(r.fresh.wrongRuns + r.traps.wrongRuns).toBe(0);
  });
});
