import { describe, expect, it } from "vitest";
import tauBench from "../fixtures/workloads/tau_bench.jsonl?raw";
import tau2Bench from "../fixtures/workloads/tau2_bench.jsonl?raw";
import { applyRenaming, renameLine, type Renamed } from "../../tools/eval-tau/rename";
import { evaluate, type Tally } from "../../tools/eval-tau/runs";
import { seeded } from "../../tools/eval-workflows/types";
import type { WorkloadLine } from "../../tools/workloads";

/**
 * The renamed-runs evaluation (tools/eval-tau, `npm run eval:tau`) on a small slice of the shipped
 * workloads: renaming is consistent and shape-preserving, renamed runs are served with no wrong replay,
 * and a planted wrong template is counted as wrong (the check can fail).
 */
const parse = (raw: string) =>
  raw
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as WorkloadLine);
const tau = parse(tauBench);
const tau2 = parse(tau2Bench);
/** Two tau-bench retail lines and one tau2 retail line whose renamed runs learned templates serve. */
const slice = [tau[12], tau[13], tau2[8]];

/** The class of each character: digit, upper, lower, or itself. */
const shape = (s: string) => s.replace(/\d/g, "9").replace(/[A-Z]/g, "A").replace(/[a-z]/g, "a");

function texts(line: WorkloadLine): string[] {
  return line.messages.flatMap((m) => [
    typeof m.content === "string" ? m.content : JSON.stringify(m.content ?? null),
    ...((m.tool_calls as Array<{ function: { arguments: string } }> | undefined) ?? []).map((c) => c.function.arguments),
  ]);
}

const served = (t: Tally) => t.served.exact + t.served.declared + t.served.learned;

describe("renamed tau-bench runs (tools/eval-tau)", () => {
  it("Should rename every opaque id consistently and keep its shape, leaving the rest as recorded", () => {
    for (const [i, line] of [...tau, ...tau2].entries()) {
      const r = renameLine(line, seeded(i + 1), false);
      expect(r.leaks).toEqual([]);
      for (const v of r.values) {
        expect(v.fresh).not.toBe(v.original);
        expect(shape(v.fresh)).toBe(shape(v.original));
        expect(v.kind).not.toBe("name");
      }
      // Swapping back gives the recording byte for byte: nothing else changed, and every occurrence moved together.
      const back: Renamed[] = r.values.map((v) => ({ ...v, original: v.fresh, fresh: v.original }));
      expect(texts(r.line).map((t) => applyRenaming(t, back))).toEqual(texts(line));
      if (r.values.length > 0) expect(texts(r.line)).not.toEqual(texts(line));
    }
    const kinds = new Set([...tau, ...tau2].flatMap((l, i) => renameLine(l, seeded(i), false).values.map((v) => v.kind)));
    expect([...kinds].sort()).toEqual(["account", "email", "order", "payment", "phone", "reservation", "user"]);
  });

  it("Should rename names as names, and the user ids and emails built from them alike", () => {
    const r = renameLine(tau[12], seeded(7), true);
    const names = r.values.filter((v) => v.kind === "name");
    expect(names.length).toBeGreaterThan(0);
    for (const v of names) expect(v.fresh).toMatch(/^[A-Z][a-z]+$/);
    const user = r.values.find((v) => v.kind === "user");
    const first = names[0];
    expect(user?.original.startsWith(first.original.toLowerCase())).toBe(true);
    expect(user?.fresh.startsWith(first.fresh.toLowerCase())).toBe(true);
    expect(r.leaks).toEqual([]);
  });

  for (const mode of ["learned", "declared"] as const) {
    it(`Should serve renamed runs (${mode}) with no wrong replay`, { timeout: 60_000 }, async () => {
      const tallies = [...(await evaluate(slice, { renames: 5, seed: 42, names: false, mode })).values()];
      const all = tallies.flatMap((t) => t.mismatches);
      expect(all).toEqual([]);
      expect(tallies.reduce((n, t) => n + t.wrong, 0)).toBe(0);
      const counted = tallies.reduce((n, t) => n + t.requests, 0);
      expect(counted).toBeGreaterThan(100);
      // Not a vacuous zero: templates served renamed data here.
      expect(tallies.reduce((n, t) => n + t.served[mode], 0)).toBeGreaterThan(10);
    });
  }

  it("Should count a planted wrong template as wrong", { timeout: 60_000 }, async () => {
    let planted = 0;
    const tallies = await evaluate(slice, {
      renames: 5,
      seed: 42,
      names: false,
      mode: "learned",
      // Before the later rounds, every learned template's answer forgets its slots: it serves the values it was learned from.
      beforeRound: (round, worker) => {
        if (round < 3) return;
        for (const t of worker.templates()) {
          const refs = t.pattern.answer.refs;
          if (!refs.some((r) => typeof r === "number")) continue;
          t.pattern.answer.refs = refs.map((r) => (typeof r === "number" ? (t.state.slots[r]?.values[0] ?? "") : r));
          planted++;
        }
      },
    });
    expect(planted).toBeGreaterThan(0);
    const wrong = [...tallies.values()].reduce((n, t) => n + t.wrong, 0);
    expect(wrong).toBeGreaterThan(0);
    expect([...tallies.values()].some((t) => served(t) > 0)).toBe(true);
  });
});
