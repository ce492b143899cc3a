import { describe, expect, it } from "vitest";
import { abstractAnswer, declaredKeying } from "../../src/cache/templates/declared";
import type { CanonicalMessage } from "../../src/core/messages";

const keying = declaredKeying(
  "tenant",
  "ns",
  JSON.stringify({ model: "m" }),
  [{ role: "user", content: "Refund order A-1001 for Adalyn Brooks." } as CanonicalMessage],
  { order: "A-1001", name: "Adalyn Brooks" },
);
const call = (args: string, extra: Record<string, unknown> = {}) => ({
  id: "call_1",
  type: "function",
  function: { name: "refund_v1", arguments: args },
  ...extra,
});
const answer = (fields: Record<string, unknown>) =>
  ({ role: "assistant", content: null, tool_calls: [call('{"order_id":"A-1001"}')], ...fields }) as unknown as CanonicalMessage;

describe("a declared answer and the fields a placeholder does not go in (abstractAnswer)", () => {
  it("Should keep out of the declared tree an answer whose reasoning, annotations or a call's other fields hold a bound value or a form of one", () => {
    if (!keying) throw new Error("the request must key as declared");
    expect(abstractAnswer(answer({ reasoning_content: "Adalyn Brooks wants a refund." }), keying)).toBeNull();
    expect(abstractAnswer(answer({ reasoning: "order a-1001 first" }), keying)).toBeNull();
    // A derived form (`1001` of `A-1001`, `adalyn` of the name), as for content.
    expect(abstractAnswer(answer({ reasoning_content: "Order 1001 is old." }), keying)).toBeNull();
    expect(abstractAnswer(answer({ annotations: [{ type: "url_citation", url_citation: { title: "adalyn's orders" } }] }), keying)).toBeNull();
    const extra = {
      ...answer({}),
      tool_calls: [call('{"order_id":"A-1001"}', { extra_content: { note: "for Adalyn Brooks" } })],
    } as unknown as CanonicalMessage;
    expect(abstractAnswer(extra, keying)).toBeNull();
  });

  it("Should store an answer whose untemplated fields hold no bound value, with its call id and function name left alone", () => {
    if (!keying) throw new Error("the request must key as declared");
    const stored = abstractAnswer(answer({ reasoning_content: "Look the order up, then refund it." }), keying);
    expect(stored).toMatchObject({
      reasoning_content: "Look the order up, then refund it.",
      tool_calls: [{ id: "call_1", function: { name: "refund_v1", arguments: '{"order_id":"{{order}}"}' } }],
    });
  });
});
