import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { runCase, type Chat } from "../../tools/eval-workflows/run";
import { DESKS, screenDesk, VIP, type ScreenCase } from "../../tools/eval-workflows/screen";
import { learningRan, settled } from "./settled";
import { chatAsSent } from "./helpers";

// Generated screening workflows (tools/eval-workflows/screen.ts) through the Worker, learned templates on.

const chatVia: Chat = chatAsSent;

const member = fc.integer({ min: 1000, max: 9999 }).map((n) => `M-${n}`);
const ref = fc.integer({ min: 10000, max: 99999 }).map((n) => `R-${n}`);

/**
 * A warm-up that tempts a template: one customer, one city, even tickets, new
 * member ids (the only value the model copies), so that the second turn's
 * answer is the same every time.
 */
const warmArb: fc.Arbitrary<ScreenCase[]> = fc.array(
  fc.record({
    first: fc.constant("Ada"),
    last: fc.constant("Knuth"),
    memberId: member,
    city: fc.constant("Paris"),
    ticket: fc.constantFrom(120, 130, 140, 150, 160),
    ref,
  }),
  { minLength: 6, maxLength: 9 },
);

/** Then cases that differ in one value the model decides on and never copies: the ticket's parity, the city's desk, a VIP last name. */
const trapArb: fc.Arbitrary<ScreenCase> = fc.oneof(
  fc.record({
    first: fc.constant("Ada"),
    last: fc.constant("Knuth"),
    memberId: member,
    city: fc.constant("Paris"),
    ticket: fc.constantFrom(121, 131, 141, 151),
    ref,
  }),
  fc.record({
    first: fc.constant("Ada"),
    last: fc.constant("Knuth"),
    memberId: member,
    city: fc.constantFrom(...Object.keys(DESKS).filter((c) => c !== "Paris"), "Sydney"),
    ticket: fc.constantFrom(120, 140),
    ref,
  }),
  fc.record({ first: fc.constant("Ada"), last: fc.constantFrom(...VIP), memberId: member, city: fc.constant("Paris"), ticket: fc.constantFrom(120, 140), ref }),
);

describe("learned templates stay fixed through the Worker", () => {
  it("Should replay no answer that differs from the model's in generated screening workflows", { timeout: 240_000 }, async () => {
    let served = 0;
    await fc.assert(
      fc.asyncProperty(warmArb, fc.array(trapArb, { minLength: 3, maxLength: 6 }), async (warm, traps) => {
        const tag = crypto.randomUUID().slice(0, 8);
        const opts = { model: `wf-screen-fixed-${tag}`, headers: { authorization: `Bearer sk-fixed-${tag}` }, declare: false };
        const run = async (c: ScreenCase) => {
          const result = await runCase(screenDesk, c, chatVia, opts);
          expect(result.mismatches).toEqual([]);
          served += result.served.exact + result.served.learned;
        };
        // Learning is queued after each response and runs in the tree learner's alarm: settled, then run it now,
        // so the traps meet whatever it learned.
        await settled(async () => {
          for (const c of warm) await run(c);
        });
        await learningRan();
        // The traps, then the first warm case again (an exact repeat must replay too).
        for (const c of [...traps, warm[0]]) await run(c);
      }),
      { numRuns: 4 },
    );
    // The repeats are exact hits: the runs did reach the cache, so 0 wrong is not for want of serving.
    expect(served).toBeGreaterThan(0);
  });
});
