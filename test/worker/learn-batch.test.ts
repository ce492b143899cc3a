import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { recordGeneration } from "../../src/store/tree/record";
import type { RecordInput } from "../../src/core/recording";
import { learnFrom } from "../../src/store/templates/learn";
import { learnBatch, MAX_PASS } from "../../src/store/templates/learn-batch";
import { evalRecordings } from "../support/eval-recordings";
import { counted } from "./d1-calls";
import { recording } from "./recordings";

const TABLES = [
  ["templates", "id"],
  ["template_evidence", "template_id, answer_hash"],
  ["template_observations", "answer_hash"],
] as const;

/** Every row learning wrote for these trees, table by table, in a fixed order. */
async function learnedRows(trees: readonly string[]): Promise<Record<string, unknown[]>> {
  const slots = trees.map((_, i) => `?${i + 1}`).join(", ");
  const out: Record<string, unknown[]> = {};
  for (const [table, order] of TABLES)
    out[table] = (
      await env.DB.prepare(`SELECT * FROM ${table} WHERE tree_id IN (${slots}) ORDER BY ${order}`)
        .bind(...trees)
        .all()
    ).results;
  return out;
}

async function forget(trees: readonly string[]): Promise<void> {
  const slots = trees.map((_, i) => `?${i + 1}`).join(", ");
  await env.DB.batch(TABLES.map(([table]) => env.DB.prepare(`DELETE FROM ${table} WHERE tree_id IN (${slots})`).bind(...trees)));
}

/** A clock that gives each learning the next millisecond from `from`. */
const clock = (from: number) => {
  let at = from;
  return () => at++;
};

/** Batches of the sizes a learner's alarm sees: 1 to 40 recordings (MAX_PASS and its cuts crossed). */
function batchesOf(inputs: readonly RecordInput[]): RecordInput[][] {
  const sizes = [1, 3, 40, 7, 2, MAX_PASS + 1, 25, 5];
  const out: RecordInput[][] = [];
  for (let at = 0, i = 0; at < inputs.length; at += sizes[i++ % sizes.length]) out.push(inputs.slice(at, at + sizes[i % sizes.length]));
  return out;
}

describe("learning a batch in passes (learn-batch.ts)", () => {
  it("Should store exactly the templates, evidence and observations of learning the recordings one by one", { timeout: 120_000 }, async () => {
    const tag = crypto.randomUUID().slice(0, 8);
    // The sign-up intake and the refund mail desk (templates learned) and the screening desk (decisions on values never copied), traps included.
    const inputs = await evalRecordings({ only: ["wf-intake", "wf-rmail", "wf-screen"], warm: 8, fresh: 30, traps: 3, tag });
    const trees = [...new Set(inputs.map((i) => i.treeId))];
    for (const input of inputs) await recordGeneration(env.DB, input);

    const one = clock(1_000_000);
    for (const input of inputs) await learnFrom(env.DB, input, one());
    const oneByOne = await learnedRows(trees);

    await forget(trees);
    const d1 = counted(env.DB);
    const failures: unknown[] = [];
    const batched = clock(1_000_000);
    let passes = 0;
    for (const batch of batchesOf(inputs)) {
      const run = <T>(work: (db: D1Database) => Promise<T>) => (passes++, work(d1.db));
      await learnBatch(batch, run, batched, (_, error) => failures.push(error));
    }
    expect(failures).toEqual([]);
    expect(await learnedRows(trees)).toEqual(oneByOne);
    // What was compared is learning, not an empty table: templates induced, confirmed, refuted; partners observed.
    const templates = oneByOne.templates as Array<{ bindings: number; refuted: number; state: string }>;

    expect(templates.filter((t) => t.bindings >= 3).length).toBeGreaterThan(0);
    expect(templates.filter((t) => t.refuted === 1 || /fence/.test(t.state)).length).toBeGreaterThan(0);
    expect(oneByOne.template_observations.length).toBeGreaterThan(inputs.length / 2);
    // Two D1 calls a pass (its reads, its writes), and far fewer passes than recordings.
    expect(d1.calls()).toBeLessThanOrEqual(2 * passes);
    expect(passes).toBeLessThan(inputs.length / 2);
  });

  it("Should end a pass before a recording under a template the pass induced, and learn it in the next", async () => {
    const treeId = `cut-${crypto.randomUUID()}`;
    const inputs = ["A-1", "B-22", "C-333", "D-4444"].map((order) => recording(treeId, [`refund order ${order}`], `refunding order ${order}`));
    for (const input of inputs) await recordGeneration(env.DB, input);
    const d1 = counted(env.DB);
    let passes = 0;
    const reports = await learnBatch(
      inputs,
      (work) => (passes++, work(d1.db)),
      clock(5_000),
      () => {},
    );
    // A-1 has no partner; B-22 pairs with it and induces; C-333 would read that template: a new pass, where it confirms it.
    expect(reports.map((r) => r?.induced)).toEqual([0, 1, 0, 0]);
    expect(reports.map((r) => r?.outcomes)).toEqual([[], [], ["confirmed"], ["confirmed"]]);
    expect(passes).toBe(2);
    expect(d1.calls()).toBe(4);
  });

  it("Should report each recording it cannot learn once, and make no D1 call, when none of a pass can be learned", async () => {
    const treeId = `unlearnable-${crypto.randomUUID()}`;
    const good = recording(treeId, ["refund order A-1"], "refunding order A-1");
    // An answer whose stored form is not JSON cannot be prepared (what an import of a damaged row could hold).
    const broken = (order: string): RecordInput => {
      const input = recording(treeId, [`refund order ${order}`], `refunding order ${order}`);
      return { ...input, answer: { ...input.answer, json: "{" } };
    };
    const d1 = counted(env.DB);
    const failed: RecordInput[] = [];
    const reports = await learnBatch(
      [broken("B-2"), broken("C-3")],
      (work) => work(d1.db),
      clock(7_000),
      (input) => failed.push(input),
    );
    expect(reports).toEqual([null, null]);
    expect(failed.map((f) => f.path[0].json)).toEqual([expect.stringContaining("B-2"), expect.stringContaining("C-3")]);
    expect(d1.calls()).toBe(0);
    // The same pass with one learnable recording still learns it.
    await recordGeneration(env.DB, good);
    const mixed = await learnBatch(
      [broken("D-4"), good],
      (work) => work(d1.db),
      clock(8_000),
      () => {},
    );
    expect(mixed.map((r) => r === null)).toEqual([true, false]);
  });
  it("Should skip a partner whose stored answer does not parse, and go on learning the tree's shape", async () => {
    const treeId = `damaged-partner-${crypto.randomUUID()}`;
    const inputs = ["A-1", "B-22", "C-333", "D-4444"].map((order) => recording(treeId, [`refund order ${order}`], `refunding order ${order}`));
    for (const input of inputs) await recordGeneration(env.DB, input);
    // The first answer's row is damaged (an older or foreign row): every later recording reads it as a recent sibling.
    await learnFrom(env.DB, inputs[0], 9_000);
    await env.DB.prepare("UPDATE nodes SET message = ?1 WHERE hash = ?2").bind("{", inputs[0].answer.hash).run();
    const failures: unknown[] = [];
    const reports = await learnBatch(
      inputs.slice(1),
      (work) => work(env.DB),
      clock(9_001),
      (_, error) => failures.push(error),
    );
    expect(failures).toEqual([]);
    // B-22 has no sound partner (A-1 is skipped); C-333 pairs with B-22 and induces; D-4444 confirms.
    expect(reports.map((r) => r?.induced)).toEqual([0, 1, 0]);
    expect(reports.map((r) => r?.outcomes)).toEqual([[], [], ["confirmed"]]);
  });
});
