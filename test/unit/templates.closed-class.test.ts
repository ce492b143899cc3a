import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../src/core/canonical";
import { walk } from "../../src/core/hash";
import type { CanonicalMessage } from "../../src/core/messages";
import { weigh } from "../../src/cache/templates/evidence";
import { explainInduce, induce, type LearnedTemplate, type Trajectory } from "../../src/cache/templates/induce";
import { decompose } from "../../src/cache/templates/leaves";
import { tiedWords } from "../../src/cache/templates/name-ties";
import { explainLearned } from "../../src/cache/templates/serve";

const ROOT = "root";
const meta = { finishReason: "tool_calls", promptTokens: 10, completionTokens: 5, latencyMs: 50 };

/** A request that gives a value (`word`) with an id and maybe an email, and an answer that copies them all into a tool call. */
function copying(word: string, id: string, email?: string): Trajectory {
  const messages: CanonicalMessage[] = [
    { role: "system", content: "Act on the request." },
    { role: "user", content: `Request ${id} for ${word}${email ? `, email ${email}` : ""}.` },
  ];
  const answer: CanonicalMessage = {
    role: "assistant",
    tool_calls: [{ id: "call_0", type: "function", function: { name: "act", arguments: canonicalJson({ id, value: word, ...(email ? { email } : {}) }) } }],
  };
  return { root: ROOT, hashes: walk(ROOT, messages).map((s) => s.hash), messages, answer, meta };
}

function served(t: LearnedTemplate, request: Trajectory): CanonicalMessage | string {
  const out = explainLearned([t], request.messages.map(decompose), 3, () => tiedWords(request.messages));
  return "message" in out ? out.message : out.reasons.join("; ");
}

function confirmed(ts: Trajectory[]): LearnedTemplate {
  const t = induce(ts[0], ts[1])!;
  for (const other of ts.slice(2)) t.state = weigh(t, other).state;
  return t;
}

describe("closed-class words never become slots; names tied to an identity do", () => {
  const closed: Array<[string, string[]]> = [
    ["statuses, capitalised", ["Delivered", "Returned", "Damaged", "Lost", "Cancelled"]],
    ["statuses, lower case", ["delivered", "returned", "damaged", "lost", "cancelled"]],
    ["plans", ["Starter", "Team", "Enterprise"]],
    ["plans, lower case", ["starter", "team", "enterprise"]],
    ["countries", ["Germany", "France", "Portugal"]],
    ["country codes", ["US", "GB", "DE"]],
    ["places", ["Lisbon", "Porto", "Braga", "Coimbra"]],
    ["multi-word categories", ["Home Office", "Field Work", "Night Shift"]],
  ];
  for (const [what, words] of closed) {
    it(`Should keep ${what} structural even when the answer copies them`, () => {
      const [a, b] = [copying(words[0], "A-1001"), copying(words[1], "A-2002")];
      const result = explainInduce(a, b);
      expect("reason" in result && result.reason).toMatch(/closed-class word/);
    });
  }

  it("Should not let an email that is no person's tie a status (runs shorter than 3 letters, or not the word)", () => {
    expect(tiedWords([{ role: "user", content: "Order Delivered for ab12@example.com, us7@example.com" }])).toEqual(new Set());
  });

  it("Should make a single-word name a slot when the request's email holds it (first name + number)", () => {
    const t = confirmed([
      copying("Ada", "A-1001", "ada42@example.com"),
      copying("Grace", "A-2002", "grace7@example.com"),
      copying("Alan", "A-3003", "alan99@example.com"),
    ]);
    expect(t.state.slots.map((s) => s.type)).toEqual(["identifier", "name", "email"]);
    const fresh = copying("Edsger", "A-4004", "edsger5@example.com");
    expect(served(t, fresh)).toEqual(fresh.answer);
  });

  it("Should tie both words of a multi-word name when the email holds one of them", () => {
    const words = tiedWords([{ role: "user", content: "Hi, I'm Ada Lovelace, email ada42@example.com. My order is Delivered." }]);
    expect(words).toEqual(new Set(["Ada", "Lovelace"]));
    expect(tiedWords([{ role: "user", content: "name=Grace Hopper; email=grace.hopper7@example.com; plan=starter; country=US" }])).toEqual(
      new Set(["Grace", "Hopper"]),
    );
    // A capitalised word before the name (a greeting, a status) is not part of it.
    expect(tiedWords([{ role: "user", content: "Delivered Ada Lovelace, ada42@example.com. Dear Ada Lovelace." }])).toEqual(new Set(["Ada", "Lovelace"]));
  });

  it("Should make ids slots whatever the words around them", () => {
    const t = induce(copying("Delivered", "A-1001"), copying("Delivered", "B-2002"));
    expect(t?.state.slots.map((s) => s.type)).toEqual(["identifier"]);
  });

  it("Should not serve a name slot for a word the request does not tie (a place where a name was), and say why", () => {
    const t = confirmed([
      copying("Ada", "A-1001", "ada42@example.com"),
      copying("Grace", "A-2002", "grace7@example.com"),
      copying("Alan", "A-3003", "alan99@example.com"),
    ]);
    // The same shape, the email of someone else: `Lisbon` is not tied, so it is a closed-class word.
    expect(served(t, copying("Lisbon", "A-4004", "edsger5@example.com"))).toMatch(/`Lisbon`\)? is a closed-class word/);
  });

  it("Should not serve a template stored before the rule (a place typed as a name slot) for a new place", () => {
    // As learned before: three places, one slot of type `name` (capitalisation taken for a name).
    const t = induce(copying("Ada", "A-1001", "ada42@example.com"), copying("Grace", "A-2002", "grace7@example.com"))!;
    t.state.slots[1].values = ["Lisbon", "Porto", "Braga"];
    t.state.bindings = ["x", "y", "z"];
    t.state.slots.forEach((s) => s.values.length < 3 && s.values.push(`${s.values[0]}x`));
    expect(served(t, copying("Coimbra", "A-4004", "ada42@example.com"))).toMatch(/closed-class word/);
  });
});
