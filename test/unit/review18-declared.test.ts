import { describe, expect, it } from "vitest";
import { abstractAnswer, declaredKeying } from "../../src/cache/templates/declared";
import type { CanonicalMessage } from "../../src/core/messages";

/**
 * Review of session 18's declared answers and their untemplated fields (declared.ts abstractAnswer): a call's
 * function name is served as recorded, never rendered, like its other fields. A model that picks its tool by a
 * bound value (`billing` -> `billing_assign`, `shipping` -> `shipping_assign`) named the value in the one field
 * nothing read: the answer was stored under the placeholder, and once two bindings that share the word (two
 * billing desks) confirmed it, every other team's ticket was served the billing tool.
 */
const keyingOf = (team: string) =>
  declaredKeying("tenant", "ns", JSON.stringify({ model: "m" }), [{ role: "user", content: `Route ticket T-1001 to the ${team} team.` } as CanonicalMessage], {
    ticket: "T-1001",
    team,
  });
const routed = (name: string) =>
  ({
    role: "assistant",
    content: null,
    tool_calls: [{ id: "call_1", type: "function", function: { name, arguments: '{"ticket":"T-1001"}' } }],
  }) as unknown as CanonicalMessage;

describe("a declared answer whose function name holds a bound value", () => {
  it("Should keep out of the declared tree an answer whose call's function name is a bound value or a form of one", () => {
    for (const [team, name] of [
      ["billing", "billing_assign"],
      ["billing-eu", "assign_to_billing"],
      ["Billing", "BillingAssign"],
    ]) {
      const keying = keyingOf(team);
      if (!keying) throw new Error("the request must key as declared");
      expect(abstractAnswer(routed(name), keying), `${team} -> ${name}`).toBeNull();
    }
  });

  it("Should still store an answer whose function name holds no bound value, the name left as the model sent it", () => {
    const keying = keyingOf("billing");
    if (!keying) throw new Error("the request must key as declared");
    expect(abstractAnswer(routed("assign_ticket"), keying)).toMatchObject({
      tool_calls: [{ function: { name: "assign_ticket", arguments: '{"ticket":"{{ticket}}"}' } }],
    });
  });
});
