import { describe, expect, it } from "vitest";
import type { CanonicalMessage } from "../../src/core/messages";
import { apiMessageOf, chatViewOf, withoutEnvelope, type TemplateView } from "../../src/cache/templates/view";
import { messageReader, NoChatView } from "../../src/store/templates/message-reader";

/** A toy API: `{who, says, flag?}`; `who: "bot"` is the model. */
interface Toy {
  who: string;
  says: string;
  flag?: boolean;
}

const faithful: TemplateView = {
  api: "toy",
  toChat: (m) => {
    const t = m as Toy;
    return { role: t.who === "bot" ? "assistant" : "user", content: [t.says], ...(t.flag !== undefined ? { toy_flag: t.flag } : {}) };
  },
  fromChat: (v) => {
    if (!Array.isArray(v.content) || v.content.length !== 1) return null;
    return { who: v.role === "assistant" ? "bot" : "human", says: v.content[0], ...(v.toy_flag !== undefined ? { flag: v.toy_flag } : {}) };
  },
  hashForm: (m) => m,
  declares: false,
  cutFinishes: new Set(),
  stopSequences: () => [],
  tokenLimit: () => null,
};

/** Leaves `flag` out of the view: two messages the model reads differently would share one. */
const lossy: TemplateView = { ...faithful, api: "lossy", toChat: (m) => ({ role: "user", content: [(m as Toy).says] }) };

describe("template views (the seam)", () => {
  it("Should read a message through a view that gives it back, and refuse one whose view leaves a field out", () => {
    expect(chatViewOf(faithful, { who: "human", says: "refund A-1", flag: true })).toEqual({ role: "user", content: ["refund A-1"], toy_flag: true });
    expect(chatViewOf(lossy, { who: "human", says: "refund A-1" })).toEqual({ role: "user", content: ["refund A-1"] });
    expect(chatViewOf(lossy, { who: "human", says: "refund A-1", flag: true })).toBeNull();
    expect(chatViewOf(lossy, { who: "bot", says: "done" })).toBeNull();
  });

  it("Should read no view from a view that throws, or from a message it does not know", () => {
    const throwing: TemplateView = {
      ...faithful,
      toChat: () => {
        throw new Error("boom");
      },
    };
    expect(chatViewOf(throwing, { who: "human", says: "x" })).toBeNull();
    expect(
      apiMessageOf(
        {
          ...faithful,
          fromChat: () => {
            throw new Error("boom");
          },
        },
        { role: "user", content: ["x"] },
      ),
    ).toBeNull();
  });

  it("Should leave the muscle-mem: fields stored around an answer out of its view", () => {
    const stored = { who: "bot", says: "done", "muscle-mem:response": { id: "r1" } };
    expect(withoutEnvelope(stored)).toEqual({ who: "bot", says: "done" });
    expect(chatViewOf(faithful, stored)).toEqual({ role: "assistant", content: ["done"] });
  });

  it("Should serve a rendered view only when the API's message reads back as the same view", () => {
    expect(apiMessageOf(faithful, { role: "assistant", content: ["refund B-2"] })).toEqual({ who: "bot", says: "refund B-2" });
    // Two texts have no toy message; a field the API has no place for would be lost on the way back.
    expect(apiMessageOf(faithful, { role: "assistant", content: ["a", "b"] })).toBeNull();
    expect(apiMessageOf(faithful, { role: "assistant", content: ["x"], extra_field: 1 } as CanonicalMessage)).toBeNull();
  });

  it("Should read a view's tree through the view, throw NoChatView for a message with none, and keep chat's and a view's readings apart", () => {
    const json = JSON.stringify({ who: "human", says: "refund A-1" });
    const toy = messageReader(faithful);
    expect(toy.stored(json)).toEqual({ role: "user", content: ["refund A-1"] });
    expect(toy.hashForm(json)).toEqual({ role: "user", content: ["refund A-1"] });
    // The same text read by a chat tree is what it parses to (no view), memoised apart from the toy's reading.
    expect(messageReader(null).stored(json)).toEqual({ who: "human", says: "refund A-1" });
    expect(toy.stored(json)).toEqual({ role: "user", content: ["refund A-1"] });
    const flagged = JSON.stringify({ who: "human", says: "x", flag: false });
    expect(() => messageReader(lossy).stored(flagged)).toThrow(NoChatView);
    expect(() => messageReader(lossy).answer(flagged)).toThrow(NoChatView);
  });
});
