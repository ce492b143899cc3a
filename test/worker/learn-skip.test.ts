import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { canonicalJson } from "../../src/core/canonical";
import { learnFrom } from "../../src/store/templates/learn";
import { learnBatch } from "../../src/store/templates/learn-batch";
import { recordGeneration } from "../../src/store/tree/record";
import { recording } from "./recordings";

/**
 * One bad answer does not stop a tree's learning: a partner (a recent answer of the same shape) whose stored
 * answer parses but cannot be read by a deeper step of learning (arguments holding `1e400`, which parse to
 * Infinity that canonical JSON refuses) is skipped with one `template_partner_skipped` line naming why, and the
 * recording learns from the others. Before, learnStep threw for every later recording of that shape, none of
 * which was then observed, so each read the same bad partner again: the shape never learned anything more.
 */

/** A stored answer that is JSON, parses, and holds a number beyond a double in its call's arguments. */
const beyondDouble = canonicalJson({
  role: "assistant",
  content: null,
  tool_calls: [{ id: "call_0", type: "function", function: { name: "refund", arguments: '{"order":"A-1","n":1e400}' } }],
});

/** Four recordings of one shape; the first is learned, then its stored answer is replaced by `damaged`. */
async function treeWithBadFirst(prefix: string, damaged: string) {
  const treeId = `${prefix}-${crypto.randomUUID()}`;
  const inputs = ["A-1", "B-22", "C-333", "D-4444"].map((order) => recording(treeId, [`refund order ${order}`], `refunding order ${order}`));
  for (const input of inputs) await recordGeneration(env.DB, input);
  await learnFrom(env.DB, inputs[0], 20_000);
  await env.DB.prepare("UPDATE nodes SET message = ?1 WHERE hash = ?2").bind(damaged, inputs[0].answer.hash).run();
  return { inputs, bad: inputs[0].answer.hash };
}

/** The `template_partner_skipped` lines logged while `work` runs. */
async function skipLines<T>(work: () => Promise<T>): Promise<{ result: T; lines: Array<Record<string, unknown>> }> {
  const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
  try {
    const result = await work();
    const lines = warn.mock.calls.map((c) => JSON.parse(String(c[0])) as Record<string, unknown>).filter((l) => l.event === "template_partner_skipped");
    return { result, lines };
  } finally {
    warn.mockRestore();
  }
}

afterEach(() => vi.restoreAllMocks());

describe("learning skips one bad partner and goes on", () => {
  it("Should learn a batch after a partner holding 1e400, naming the partner and why (was: no recording of the shape learned)", async () => {
    const { inputs, bad } = await treeWithBadFirst("skip-batch", beyondDouble);
    const failures: unknown[] = [];
    let at = 20_001;
    const { result: reports, lines } = await skipLines(() =>
      learnBatch(
        inputs.slice(1),
        (work) => work(env.DB),
        () => at++,
        (_, error) => failures.push(error),
      ),
    );
    expect(failures).toEqual([]);
    // B-22 has no sound partner (A-1 is skipped); C-333 pairs with B-22 and induces; D-4444 confirms.
    expect(reports.map((r) => r?.induced)).toEqual([0, 1, 0]);
    expect(reports.map((r) => r?.outcomes)).toEqual([[], [], ["confirmed"]]);
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.every((l) => l.node === bad && /Infinity/.test(String(l.error)))).toBe(true);
  });

  it("Should learn one by one after a partner holding 1e400 (was: each learnFrom threw)", async () => {
    const { inputs } = await treeWithBadFirst("skip-one", beyondDouble);
    const reports = [];
    for (const [i, input] of inputs.slice(1).entries()) reports.push(await learnFrom(env.DB, input, 30_000 + i));
    expect(reports.map((r) => r.induced)).toEqual([0, 1, 0]);
    expect(reports.map((r) => r.outcomes)).toEqual([[], [], ["confirmed"]]);
  });
});
