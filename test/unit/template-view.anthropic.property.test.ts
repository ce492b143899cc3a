import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../src/core/canonical";
import type { CanonicalMessage } from "../../src/core/messages";
import { compose, decompose } from "../../src/cache/templates/leaves";
import { apiMessageOf, chatViewOf } from "../../src/cache/templates/view";
import { keyAnthropicAnswer } from "../../src/providers/anthropic/key";
import { anyText, jsonish } from "./templates.support";
import { hashJson, keyed, pathOf, view } from "./template-view.anthropic.support";

/**
 * The Anthropic view's round trip on generated messages: answers of text, tool_use (inputs written as the model
 * may write them: compact, spaced, `1.0`, or not kept) and thinking blocks, and user turns of texts and tool
 * results, each keyed or recorded by the adapter. Every one has a view that gives it back (an answer whole),
 * also from its skeleton and leaves, and two that differ as stored never share one.
 */

/** The input as the model may have written it: compact, spaced, integers written `N.0`, or no text kept. */
const written = fc.constantFrom("compact", "spaced", "floats", "none");
function textOf(input: unknown, how: string): string | undefined {
  if (how === "none") return undefined;
  const text = JSON.stringify(input, null, how === "spaced" ? 1 : undefined);
  return how === "floats" ? text.replace(/(:\s*-?\d+)(?=[,}\]\s])/g, "$1.0") : text;
}

const answerBlock = fc.oneof(
  fc.record({ type: fc.constant("text"), text: anyText }),
  fc.record({ type: fc.constant("tool_use"), id: fc.constantFrom("a", "b"), name: fc.constantFrom("get_order", "refund"), input: jsonish, how: written }),
  fc.record({ type: fc.constant("thinking"), thinking: anyText, signature: fc.string({ minLength: 1, maxLength: 4 }) }),
);

/** The stored answer for generated blocks (null when the adapter records none). */
function record(blocks: ReadonlyArray<Record<string, unknown>>): unknown {
  const texts: Array<string | undefined> = [];
  const content = blocks.map(({ how, ...block }) => {
    if (block.type === "tool_use") texts.push(textOf(block.input, how as string));
    return block;
  });
  const answer = keyAnthropicAnswer(keyed([{ role: "user", content: "Refund A-1." }]), { role: "assistant", content: content as never }, texts);
  // As a node holds it: its JSON text read back (`-0` is `0` there).
  return answer ? (JSON.parse(answer.json) as unknown) : null;
}

const viewJson = (message: unknown) => {
  const chat = chatViewOf(view, message);
  return chat === null ? null : canonicalJson(chat);
};

function roundTrips(message: unknown): void {
  const chat = chatViewOf(view, message);
  expect(chat).not.toBeNull();
  const { skeleton, leaves } = decompose(chat as CanonicalMessage);
  const again = compose(
    skeleton,
    leaves.map((l) => l.value),
  );
  expect(again).toEqual(chat);
  expect(hashJson(apiMessageOf(view, again as CanonicalMessage))).toBe(hashJson(message));
}

describe("the Anthropic view on generated messages", () => {
  it("Should give every recorded answer back whole, from its view and from its skeleton and leaves", () => {
    fc.assert(
      fc.property(fc.array(answerBlock, { maxLength: 4 }), (blocks) => {
        const stored = record(blocks);
        fc.pre(stored !== null);
        roundTrips(stored);
        const back = apiMessageOf(view, chatViewOf(view, stored) as CanonicalMessage) as { content: Array<Record<string, unknown>> };
        // Whole, but for a call recorded without its text, which comes back with its canonical JSON as that text.
        const kept = (stored as { content: Array<Record<string, unknown>> }).content.map((b) =>
          b.type === "tool_use" && b.input_json === undefined ? { ...b, input_json: canonicalJson(b.input) } : b,
        );
        expect(back.content).toEqual(kept);
      }),
      { numRuns: 150 },
    );
  });

  it("Should never give two recorded answers that serve differently one view (one block changed a little)", () => {
    /** `blocks` with block `i` changed as `how` says: its text split or emptied, its input written otherwise, its signature, or moved first. */
    function changed(blocks: Array<Record<string, unknown>>, i: number, how: number): Array<Record<string, unknown>> {
      const out = blocks.map((b) => ({ ...b }));
      const b = out[i];
      if (how === 0) return [b, ...out.filter((_, j) => j !== i)];
      if (b.type === "text") {
        const chars = [...(b.text as string)];
        const split = [
          { ...b, text: chars[0] },
          { ...b, text: chars.slice(1).join("") },
        ];
        out.splice(i, 1, ...(how === 1 && chars.length > 1 ? split : [{ ...b, text: "" }]));
      } else if (b.type === "tool_use")
        b.how = ["compact", "spaced", "floats", "none"][(["compact", "spaced", "floats", "none"].indexOf(b.how as string) + how) % 4];
      else b.signature = `${b.signature as string}x`;
      return out;
    }
    // What a hit serves of a node (render.ts): its blocks, a call's input as the text kept, else as JSON.stringify writes it.
    const served = (m: unknown) =>
      canonicalJson(
        (m as { content: Array<Record<string, unknown>> }).content.map((b) =>
          b.type === "tool_use" ? { ...b, input_json: b.input_json ?? JSON.stringify(b.input) } : b,
        ),
      );
    let apart = 0;
    fc.assert(
      fc.property(fc.array(answerBlock, { minLength: 1, maxLength: 4 }), fc.nat(), fc.integer({ min: 0, max: 3 }), (blocks, at, how) => {
        const [sa, sb] = [record(blocks), record(changed(blocks, at % blocks.length, how))];
        fc.pre(sa !== null && sb !== null);
        if (served(sa) === served(sb)) return;
        apart++;
        expect(viewJson(sa)).not.toBe(viewJson(sb));
      }),
      { numRuns: 200 },
    );
    expect(apart).toBeGreaterThan(50);
  });

  it("Should give every keyed user turn of texts and tool results back from its view", () => {
    const result = fc.record({
      type: fc.constant("tool_result"),
      tool_use_id: fc.constantFrom("toolu_a", "toolu_b"),
      content: fc.oneof(anyText, fc.array(fc.record({ type: fc.constant("text"), text: anyText }), { maxLength: 3 })),
      is_error: fc.boolean(),
    });
    const turn = fc.array(fc.oneof(result, fc.record({ type: fc.constant("text"), text: anyText })), { minLength: 1, maxLength: 4 });
    const calls = { role: "assistant", content: ["toolu_a", "toolu_b"].map((id) => ({ type: "tool_use", id, name: "get_order", input: { id } })) };
    fc.assert(
      fc.property(turn, (content) => {
        let messages: unknown[];
        try {
          messages = pathOf(keyed([{ role: "user", content: "Refund A-1." }, calls, { role: "user", content }]));
        } catch {
          fc.pre(false);
          return;
        }
        for (const message of messages) roundTrips(message);
      }),
      { numRuns: 150 },
    );
  });
});
