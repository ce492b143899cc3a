import { describe, expect, it } from "vitest";
import type { CanonicalMessage } from "../../src/core/messages";
import { bindingDigestOf, declaredKeying, declaredServes } from "../../src/cache/templates/declared";
import { templateSettings } from "../../src/config";

const user = (content: string): CanonicalMessage[] => [{ role: "user", content }];

describe("declaredServes", () => {
  const one = [{ answer: "h", binding: "b1" }];
  const two = [...one, { answer: "h", binding: "b2" }];

  it("Should serve an answer to the binding it was recorded with, and to others only after a second distinct binding", () => {
    expect(declaredServes(one, "h", "b1", 2)).toBe(true);
    expect(declaredServes(one, "h", "b3", 2)).toBe(false);
    expect(declaredServes([...one, { answer: "h", binding: "b1" }], "h", "b3", 2)).toBe(false);
    expect(declaredServes(two, "h", "b3", 2)).toBe(true);
    expect(declaredServes(two, "h", "b3", 3)).toBe(false);
  });

  it("Should serve no new values once the model answered the node otherwise for some binding", () => {
    const split = [...two, { answer: "other", binding: "b4" }];
    expect(declaredServes(split, "h", "b5", 2)).toBe(false);
    expect(declaredServes(split, "h", "b1", 2)).toBe(true);
    expect(declaredServes([], "h", "b1", 2)).toBe(false);
  });
});

describe("bindingDigestOf", () => {
  it("Should tell bindings apart by the values the request holds, never by a value it does not contain", () => {
    const keyed = (order: string, unused: string) => declaredKeying("t", "ns", "{}", user(`Refund order ${order}`), { order_id: order, trace: unused })!;
    expect(bindingDigestOf(keyed("A-1042", "t-0001"))).toBe(bindingDigestOf(keyed("A-1042", "t-0002")));
    expect(bindingDigestOf(keyed("A-1042", "t-0001"))).not.toBe(bindingDigestOf(keyed("B-2077", "t-0001")));
  });
});

describe("DECLARED_MIN_BINDINGS", () => {
  it("Should default to 2 and take 2..16", () => {
    expect(templateSettings({}).declaredMinBindings).toBe(2);
    expect(templateSettings({ DECLARED_MIN_BINDINGS: "4" }).declaredMinBindings).toBe(4);
    expect(templateSettings({ DECLARED_MIN_BINDINGS: "1" }).declaredMinBindings).toBe(2);
    expect(templateSettings({ DECLARED_MIN_BINDINGS: "x" }).declaredMinBindings).toBe(2);
  });
});
